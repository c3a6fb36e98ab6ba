<?php

declare(strict_types=1);

namespace Slim\Tests;

use PHPUnit\Framework\TestCase;
use Slim\App;

class AppTest extends TestCase
{
    public function testVersion(): void
    {
        $this->assertSame('4.14.0', App::VERSION);
    }
}
