import { describe, expect, test } from "bun:test";
import { regexProblem } from "./regex-safety.ts";

describe("regexProblem", () => {
  test("accepts ordinary patterns", () => {
    for (const ok of [
      "/foo/[0-9]+/bar",
      "^/api/v[12]/.*$",
      "/(foo|bar)+/x",
      "/a{2,5}",
      "/(?:abc)+",
      "/(?<id>[a-z]+)/x",
      "[^/]+\\.(png|jpg)",
      "/\\d+/\\w+",
      "/x(a|b)?",
    ]) {
      expect(regexProblem(ok)).toBeUndefined();
    }
  });
  test("refuses catastrophic or non-linear constructs", () => {
    const cases: Record<string, string> = {
      "(a+)+$": "nest",
      "(a*b)*": "nest",
      "/(x|xy)+": "distinct",
      "((a|b)+)*": "nest",
      "(a)\\1": "backreferences",
      "(?<n>a)\\k<n>": "backreferences",
      "/foo(?=bar)": "lookahead",
      "(?<!x)y": "lookahead",
      ".*a.*b.*c.*d.*e": "unbounded",
      "a{1,5000}": "1000",
      "(": "valid",
      "(?i)abc": "valid",
      "": "empty",
    };
    for (const [pattern, why] of Object.entries(cases)) expect(regexProblem(pattern)).toContain(why);
  });
  test("quantifiers inside character classes are literal", () => {
    expect(regexProblem("([+*]a)+")).toBeUndefined();
  });
});
