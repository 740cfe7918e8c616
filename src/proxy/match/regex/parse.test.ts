import { describe, expect, test } from "bun:test";
import { regexError } from "./regex.ts";

describe("refusals say why", () => {
  test("constructs a linear-time engine cannot run", () => {
    const cases: Record<string, string> = {
      "(a)\\1": "must not use backreferences",
      "(?<n>a)\\k<n>": "must not use backreferences",
      "(?P<n>a)(?P=n)": "must not use backreferences",
      "/foo(?=bar)": "must not use lookahead or lookbehind",
      "/foo(?!bar)": "lookahead",
      "(?<=x)y": "lookahead",
      "(?<!x)y": "lookahead",
      "a(?i)bc": "inline flags",
      "(?i)(?i)abc": "inline flags",
      "(?s:.)": "inline flags",
      "(?i)": "a pattern after (?i)",
    };
    for (const [pattern, why] of Object.entries(cases)) expect(regexError(pattern)).toContain(why);
  });
  test("constructs whose meaning differs between RE2 and JavaScript", () => {
    const cases: Record<string, string> = {
      "\\bfoo\\b": "word boundaries",
      "\\Bx": "word boundaries",
      "\\p{L}+": "Unicode property escapes",
      "[[:digit:]]+": "POSIX classes",
      "\\Afoo\\z": "unknown escape \\A",
      "[]a]": "empty character class",
      "[^]": "empty character class",
      "\\01": "octal",
      "[\\1]": "octal",
      "\\u{41}": "four hex digits",
      "\\xZ": "two hex digits",
      "[\\d-z]": "range end",
    };
    for (const [pattern, why] of Object.entries(cases)) expect(regexError(pattern)).toContain(why);
  });
  test("syntax errors and size limits", () => {
    const cases: Record<string, string> = {
      "": "must not be empty",
      "(": "missing )",
      "a)": "unmatched )",
      "[a-": "missing ]",
      "[z-a]": "out of order",
      "a{3,2}": "out of order",
      "*a": "nothing to repeat",
      "a|+": "nothing to repeat",
      "{2}": "nothing to repeat",
      "a**": "cannot follow another",
      "a*+": "cannot follow another",
      "^*": "anchor cannot be repeated",
      "\\": "at end of pattern",
      "a{1001}": "more than 1000 times",
      "a{0,5000}": "more than 1000 times",
      "((a{1000}){1000})": "too large",
      [`/${"a".repeat(1024)}`]: "no more than 1024 characters",
    };
    for (const [pattern, why] of Object.entries(cases)) expect(regexError(pattern)).toContain(why);
  });
  test("reasons carry the offset of a syntax problem", () => {
    expect(regexError("/ok/(x")).toBe("is not a supported regular expression: missing ) (at offset 6)");
  });
  test("accepted forms", () => {
    for (const ok of [
      "(?P<id>\\d+)",
      "(?<id>\\d+)",
      "a{,5}",
      "a{",
      "}",
      "]",
      "(^)*x",
      "x($)*",
      "a*?b+?c??d{2,3}?",
    ])
      expect(regexError(ok)).toBeUndefined();
  });
});
