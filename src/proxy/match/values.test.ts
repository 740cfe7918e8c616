import { describe, expect, test } from "bun:test";
import { compileValueMatcher, firstQueryValue, valueMatches } from "./values.ts";

describe("firstQueryValue", () => {
  test("returns the first value, form-decoded", () => {
    expect(firstQueryValue("?a=1&b=x%20y&a=2", "a")).toBe("1");
    expect(firstQueryValue("?a=1&b=x%20y+z", "b")).toBe("x y z");
    expect(firstQueryValue("?flag&a=1", "flag")).toBe("");
    expect(firstQueryValue("?a%5Bb%5D=1", "a[b]")).toBe("1");
  });
  test("absent is undefined, names are case-sensitive", () => {
    expect(firstQueryValue("", "a")).toBeUndefined();
    expect(firstQueryValue("?A=1", "a")).toBeUndefined();
    expect(firstQueryValue("?ab=1", "a")).toBeUndefined();
  });
  test("a malformed escape does not throw", () => expect(firstQueryValue("?a=%zz", "a")).toBe("%zz"));
});

describe("value matchers", () => {
  test("regex is anchored, a bad one does not compile", () => {
    const m = compileValueMatcher({ type: "RegularExpression", name: "x", value: "a|b" });
    expect(m && valueMatches(m, "a")).toBe(true);
    expect(m && valueMatches(m, "ab")).toBe(false);
    expect(compileValueMatcher({ type: "RegularExpression", name: "x", value: "[" })).toBeUndefined();
  });
  test("regexes run on the linear engine: what it refuses never compiles, a hostile value is quick", () => {
    expect(compileValueMatcher({ type: "RegularExpression", name: "x", value: "(a)\\1" })).toBeUndefined();
    const m = compileValueMatcher({ type: "RegularExpression", name: "x", value: "(a+)+b" });
    const started = performance.now();
    expect(m && valueMatches(m, "a".repeat(8000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
  test("absent never matches", () => {
    const m = compileValueMatcher({ type: "Exact", name: "x", value: "" });
    expect(m && valueMatches(m, null)).toBe(false);
    expect(m && valueMatches(m, "")).toBe(true);
  });
});
