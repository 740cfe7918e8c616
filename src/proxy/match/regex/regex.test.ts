import { describe, expect, test } from "bun:test";
import { compileRegex } from "./regex.ts";

/** What the data plane did before: JavaScript's RegExp, anchored. The reference for every answer. */
const reference = (pattern: string) => new RegExp(`^(?:${pattern})$`);

function engine(pattern: string) {
  const c = compileRegex(pattern);
  if (c.error !== undefined) throw new Error(`${pattern}: ${c.error}`);
  return c.regex;
}

function agree(pattern: string, inputs: readonly string[]): void {
  const ours = engine(pattern);
  const theirs = reference(pattern);
  for (const s of inputs) {
    if (ours.test(s) !== theirs.test(s))
      throw new Error(`${JSON.stringify(pattern)} on ${JSON.stringify(s)}: ours ${ours.test(s)}`);
  }
}

describe("engine agrees with RegExp", () => {
  test("patterns route authors write", () => {
    const paths = [
      "/",
      "/items/42",
      "/items/",
      "/items/4x",
      "/api/v1/users",
      "/api/v3/x",
      "/a.png",
      "/a.PNG",
    ];
    const more = ["/foo/bar/baz", "/x/y.jpg", "/v2", "", "a", "\n", "/é/ü", "/😀", "deadbeef", "DEADBEEF0"];
    const inputs = [...paths, ...more];
    for (const p of [
      "/items/[0-9]+",
      "^/api/v[12]/.*$",
      "/(foo|bar)+/x",
      "/a{2,5}",
      "/(?:abc)+",
      "/(?<id>[a-z]+)/x",
      "[^/]+\\.(png|jpg)",
      "/\\d+/\\w+",
      "/x(a|b)?",
      "[a-f0-9]{8}",
      ".*",
      ".+\\.(png|jpg|gif)",
      "/[^/]*/[^/]*",
      "/\\S+",
      "\\s*",
      "[\\w.-]+",
      "[\\D]+",
      "\\x2F.*",
      "\\u00e9|/\\u00e9/\\u00fc",
      "/\\W.*",
      "/😀",
      "/.",
      "a{0}",
      "(a|)+",
      "(?:a*)*",
      "^a|^/.*",
      "/foo$|/x$",
      "x^|/.*",
      "[-a]|[a-]|[\\]]|[\\^]|]|}|{|a{|a{1,x}",
      "[\\t\\n\\r\\v\\f\\0\\cJ\\b]",
      "\\/\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\\\\\^\\$",
      "[a-f0-9]{8,}|[A-F]{2}",
    ])
      agree(p, inputs);
  });

  test("lazy quantifiers give the same answer", () => {
    for (const p of ["/a*?", "/.+?/x", "a??b", "(ab){1,3}?", "a{2,}?"])
      agree(p, ["/", "/aa", "/xx/x", "b", "abab", "aaa"]);
  });

  test("(?P<name>…) matches as a group does (RegExp lacks it: compared with (?:…))", () => {
    const ours = engine("/(?P<id>[0-9]+)/x");
    const theirs = reference("/(?:[0-9]+)/x");
    for (const s of ["/1/x", "/x/x", "/12/x/"]) expect(ours.test(s)).toBe(theirs.test(s));
  });

  test("randomized: 3000 patterns over a small alphabet, every input up to length 5", () => {
    const inputs = allStrings("ab\n", 5);
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 8) % n;
    };
    for (let i = 0; i < 3000; i++) {
      let g = 0;
      // RegExp refuses duplicate group names (ours allows them): every name is made unique.
      agree(
        randomPattern(rand, 3).replaceAll("(?<g>", () => `(?<g${g++}>`),
        inputs,
      );
    }
  });
});

/** A random pattern of our subset, `depth` levels of nesting at most. */
function randomPattern(rand: (n: number) => number, depth: number): string {
  const atoms = ["a", "b", ".", "[ab]", "[^a]", "\\w", "\\W", "\\s", "[a-b\\n]", "\\n"];
  const quants = ["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?", "{1,3}?"];
  const piece = (): string => {
    const r = rand(10);
    if (depth > 0 && r < 3) {
      const open = ["(", "(?:", "(?<g>", "("][rand(4)];
      return `${open}${randomPattern(rand, depth - 1)})${quants[rand(quants.length)]}`;
    }
    if (r === 3) return ["^", "$"][rand(2)] as string;
    return `${atoms[rand(atoms.length)]}${quants[rand(quants.length)]}`;
  };
  const alt = () => Array.from({ length: 1 + rand(3) }, piece).join("");
  return Array.from({ length: 1 + (rand(4) === 0 ? 1 : 0) + (rand(6) === 0 ? 1 : 0) }, alt).join("|");
}

function allStrings(alphabet: string, maxLen: number): string[] {
  const out = [""];
  let layer = [""];
  for (let n = 1; n <= maxLen; n++) {
    layer = layer.flatMap((s) => [...alphabet].map((c) => s + c));
    out.push(...layer);
  }
  return out;
}
