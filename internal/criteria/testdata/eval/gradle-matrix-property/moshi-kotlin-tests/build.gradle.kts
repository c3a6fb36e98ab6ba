plugins {
  kotlin("jvm")
  kotlin("kapt") apply false
  id("com.google.devtools.ksp") apply false
}

enum class TestMode {
  REFLECT,
  KAPT,
  KSP,
}

val testMode =
  findProperty("kotlinTestMode")?.toString()
    ?.let(TestMode::valueOf)
    ?: TestMode.REFLECT

when (testMode) {
  TestMode.REFLECT -> {
    // Do nothing!
  }
  TestMode.KAPT -> {
    apply(plugin = "org.jetbrains.kotlin.kapt")
  }
  TestMode.KSP -> {
    apply(plugin = "com.google.devtools.ksp")
  }
}
