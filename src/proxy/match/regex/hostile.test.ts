import { describe, expect, test } from "bun:test";
import { compileRegex } from "./regex.ts";

function timed(pattern: string, input: string): { result: boolean; ms: number } {
  const c = compileRegex(pattern);
  if (c.error !== undefined) throw new Error(c.error);
  const started = performance.now();
  const result = c.regex.test(input);
  return { result, ms: performance.now() - started };
}

// Each took seconds with RegExp (audit figures in the comments) and passed the old static checker.
// The bound is generous so a loaded CI machine does not flake; they take well under 50 ms.
describe("the audit's patterns run in linear time", () => {
  test("/.*.*.*.*x on a 1 KB path (RegExp: 35.6 s)", () => {
    const { result, ms } = timed("/.*.*.*.*x", `/${"a".repeat(1023)}`);
    expect(result).toBe(false);
    expect(ms).toBeLessThan(200);
  });
  test("/(\\d+)?(\\d+)?(\\d+)?(\\d+)?x on 600 digits (RegExp: 5.8 s)", () => {
    const { result, ms } = timed("/(\\d+)?(\\d+)?(\\d+)?(\\d+)?x", `/${"1".repeat(600)}`);
    expect(result).toBe(false);
    expect(ms).toBeLessThan(200);
  });
  test("\\w{0,1000} six times on 150 characters (RegExp: 7 s)", () => {
    const { result, ms } = timed("\\w{0,1000}".repeat(6), `${"a".repeat(150)}!`);
    expect(result).toBe(false);
    expect(ms).toBeLessThan(200);
  });
  test("nested repetition (a+)+$ on an 8 KB request line", () => {
    const { result, ms } = timed("/(a+)+$", `/${"a".repeat(8191)}!`);
    expect(result).toBe(false);
    expect(ms).toBeLessThan(200);
  });
});

describe("bounded DFA cache", () => {
  test("a pattern with more DFA states than the cache holds still answers as RegExp does", () => {
    // (a|b)*a(a|b){12}: the DFA needs 2^13 states, more than the cache allows, so long inputs run
    // partly by simulation; the answers must not change.
    const pattern = "(a|b)*a(a|b){12}";
    const c = compileRegex(pattern);
    if (c.error !== undefined) throw new Error(c.error);
    const reference = new RegExp(`^(?:${pattern})$`);
    let seed = 7;
    for (let i = 0; i < 300; i++) {
      let s = "";
      for (let j = 0; j < 40 + (i % 50); j++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        s += (seed >>> 10) & 1 ? "a" : "b";
      }
      expect(c.regex.test(s)).toBe(reference.test(s));
    }
  });
  test("the worst accepted pattern on the longest request line stays bounded", () => {
    const { ms } = timed("\\w{0,1000}".repeat(6), "a".repeat(8192));
    expect(ms).toBeLessThan(1000);
  });
});
