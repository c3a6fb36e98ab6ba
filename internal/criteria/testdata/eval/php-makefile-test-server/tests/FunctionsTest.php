<?php

namespace GuzzleHttp\Tests;

use PHPUnit\Framework\TestCase;

class FunctionsTest extends TestCase
{
    public function testDescribesType(): void
    {
        self::assertSame('string', \GuzzleHttp\describe_type('a'));
    }
}
