import { assertEquals } from "jsr:@std/assert@^1.0";
import { Application } from "./application.ts";

Deno.test("use() registers middleware", () => {
  assertEquals(new Application().use(() => {}).size, 1);
});
