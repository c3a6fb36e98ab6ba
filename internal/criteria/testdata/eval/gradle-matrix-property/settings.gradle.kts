pluginManagement {
  repositories {
    mavenCentral()
    gradlePluginPortal()
  }
}

rootProject.name = "moshi-root"

include(":moshi")
include(":moshi-kotlin")
include(":moshi-kotlin-tests")
