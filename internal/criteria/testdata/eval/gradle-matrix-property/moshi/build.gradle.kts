plugins {
  kotlin("jvm")
}
