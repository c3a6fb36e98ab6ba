<?php

declare(strict_types=1);

namespace Slim;

class App
{
    public const VERSION = '4.14.0';
}
