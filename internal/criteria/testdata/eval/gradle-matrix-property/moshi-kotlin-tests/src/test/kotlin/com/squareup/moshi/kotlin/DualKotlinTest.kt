package com.squareup.moshi.kotlin

import kotlin.test.Test
import kotlin.test.assertEquals

class DualKotlinTest {
  @Test fun smoke() {
    assertEquals(2, 1 + 1)
  }
}
