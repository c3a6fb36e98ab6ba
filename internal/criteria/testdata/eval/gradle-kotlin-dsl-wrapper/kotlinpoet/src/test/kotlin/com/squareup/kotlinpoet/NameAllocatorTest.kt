package com.squareup.kotlinpoet

import kotlin.test.Test
import kotlin.test.assertEquals

class NameAllocatorTest {
  @Test fun usage() {
    val allocator = NameAllocator()
    assertEquals("foo", allocator.newName("foo"))
    assertEquals("foo_", allocator.newName("foo"))
  }
}
