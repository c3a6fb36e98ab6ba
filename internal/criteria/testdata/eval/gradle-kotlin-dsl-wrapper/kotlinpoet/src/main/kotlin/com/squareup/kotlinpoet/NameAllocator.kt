package com.squareup.kotlinpoet

public class NameAllocator {
  private val allocated = mutableSetOf<String>()

  public fun newName(suggestion: String): String {
    var name = suggestion
    while (!allocated.add(name)) name += "_"
    return name
  }
}
