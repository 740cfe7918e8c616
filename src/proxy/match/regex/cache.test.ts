import { describe, expect, test } from "bun:test";
import { CACHE_SIZE, compileRegex } from "./regex.ts";

describe("compiled pattern cache", () => {
  test("a pattern is compiled once and shared; a refusal is remembered too", () => {
    const a = compileRegex("/v[0-9]+/items");
    expect(compileRegex("/v[0-9]+/items")).toBe(a);
    expect(a.regex?.test("/v12/items")).toBe(true);
    expect(a.regex?.test("/v/items")).toBe(false);
    const bad = compileRegex("(unclosed");
    expect(bad.error).toBeDefined();
    expect(compileRegex("(unclosed")).toBe(bad);
  });

  test("patterns no longer asked for age out after two generations", () => {
    const first = compileRegex("/aged/[a-z]+");
    for (let i = 0; i < 2 * CACHE_SIZE + 1; i++) compileRegex(`/filler/${i}`);
    const again = compileRegex("/aged/[a-z]+");
    expect(again).not.toBe(first);
    expect(again.regex?.test("/aged/x")).toBe(true);
  });

  test("one still in use survives a generation change", () => {
    const kept = compileRegex("/kept/.*");
    for (let i = 0; i < CACHE_SIZE + 1; i++) {
      compileRegex(`/other/${i}`);
      if (i % 1000 === 0) expect(compileRegex("/kept/.*")).toBe(kept);
    }
    expect(compileRegex("/kept/.*")).toBe(kept);
  });
});
