<?php

declare(strict_types=1);

namespace Ramsey\Uuid;

function v4(): string
{
    return Uuid::NIL;
}
