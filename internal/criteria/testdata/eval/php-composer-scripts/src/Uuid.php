<?php

declare(strict_types=1);

namespace Ramsey\Uuid;

class Uuid
{
    public const NIL = '00000000-0000-0000-0000-000000000000';
}
