package com.squareup.moshi;

public @interface Json {
  String name();
}
