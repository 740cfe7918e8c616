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
  test("accepts patterns JavaScript would backtrack on: the engine is linear", () => {
    for (const ok of ["(a+)+$", "(a*b)*", "/(x|xy)+", "((a|b)+)*", ".*a.*b.*c.*d.*e", "/(?P<id>\\d+)"])
      expect(regexProblem(ok)).toBeUndefined();
  });
  test("refuses what the engine cannot run, with the engine's reason", () => {
    const cases: Record<string, string> = {
      "(a)\\1": "backreferences",
      "(?<n>a)\\k<n>": "backreferences",
      "/foo(?=bar)": "lookahead",
      "(?<!x)y": "lookahead",
      "a{1,5000}": "1000",
      "(": "missing )",
      "a(?i)bc": "inline flags",
      "\\bword": "word boundaries",
      "": "empty",
    };
    for (const [pattern, why] of Object.entries(cases)) expect(regexProblem(pattern)).toContain(why);
  });
  test("quantifiers inside character classes are literal", () => {
    expect(regexProblem("([+*]a)+")).toBeUndefined();
  });
});
