"use strict";

const { format } = require("../..");

test("adds a trailing newline", () => {
  expect(format("a")).toBe("a\n");
});
