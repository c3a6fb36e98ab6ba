<?php

declare(strict_types=1);

namespace Ramsey\Uuid\Test;

use PHPUnit\Framework\TestCase;
use Ramsey\Uuid\Uuid;

class UuidTest extends TestCase
{
    public function testNil(): void
    {
        $this->assertSame(36, strlen(Uuid::NIL));
    }
}
