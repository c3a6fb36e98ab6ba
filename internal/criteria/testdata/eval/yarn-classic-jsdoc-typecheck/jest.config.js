"use strict";

module.exports = {
  testEnvironment: "node",
  testRegex: "jsfmt\\.spec\\.js$|__tests__/.*\\.js$",
};
