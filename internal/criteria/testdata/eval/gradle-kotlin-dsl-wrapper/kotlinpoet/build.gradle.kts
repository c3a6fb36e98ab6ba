plugins {
  kotlin("jvm")
}

dependencies {
  testImplementation(kotlin("test-junit"))
}
