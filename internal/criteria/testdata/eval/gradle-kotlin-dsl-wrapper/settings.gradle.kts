/*
 * Copyright (C) 2019 Square, Inc.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 */
pluginManagement {
  repositories {
    mavenCentral()
    gradlePluginPortal()
  }
}

include(":kotlinpoet")
include(":interop:javapoet")

rootProject.name = "kotlinpoet-root"
