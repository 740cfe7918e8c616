import { expect, test } from "bun:test";
import { parseDuration } from "./durations.ts";

test("parseDuration follows GEP-2257", () => {
  expect(parseDuration("500ms")).toBe(500);
  expect(parseDuration("1h30m")).toBe(5_400_000);
  expect(parseDuration("1m1s1ms")).toBe(61_001);
  expect(parseDuration("0s")).toBe(0);
  for (const bad of ["", "1.5s", "10", "1d", "123456s", "1h1m1s1ms1h", "-1s"])
    expect(parseDuration(bad)).toBeUndefined();
});
