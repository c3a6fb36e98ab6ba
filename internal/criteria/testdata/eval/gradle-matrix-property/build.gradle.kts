plugins {
  alias(libs.plugins.kotlinJvm) apply false
  alias(libs.plugins.ksp) apply false
}

allprojects {
  group = "com.squareup.moshi"
  version = project.property("VERSION_NAME") as String

  repositories {
    mavenCentral()
  }
}
