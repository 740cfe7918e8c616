import { describe, expect, test } from "bun:test";
import { compileRegex } from "./regex.ts";

/** The reference for every answer: what RegExp's exec returns for the anchored pattern, as a plain array. */
function reference(pattern: string, value: string, ignoreCase: boolean): (string | undefined)[] | null {
  const m = new RegExp(`^(?:${pattern})$`, ignoreCase ? "i" : "").exec(value);
  return m === null ? null : Array.from(m);
}

/** Compares exec (and test) with RegExp on every input; throws naming the first disagreement. */
function agree(pattern: string, inputs: readonly string[], ignoreCase = false): void {
  const c = compileRegex(pattern, { ignoreCase });
  if (c.error !== undefined) throw new Error(`${pattern}: ${c.error}`);
  for (const s of inputs) {
    const want = reference(pattern, s, ignoreCase);
    const got = c.regex.exec(s);
    const same =
      want === null
        ? got === null
        : got !== null && got.length === want.length && got.every((g, i) => g === want[i]);
    if (!same || c.regex.test(s) !== (want !== null))
      throw new Error(
        `${JSON.stringify(pattern)}${ignoreCase ? " (i)" : ""} on ${JSON.stringify(s)}: ` +
          `RegExp ${JSON.stringify(want)}, ours ${JSON.stringify(got)} (test ${c.regex.test(s)})`,
      );
  }
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

describe("exec agrees with RegExp", () => {
  test("rewrite-target patterns (ingress-nginx)", () => {
    const paths = [
      "/something",
      "/something/",
      "/something/new",
      "/something/a/b?c",
      "/somethingelse",
      "/",
      "",
    ];
    for (const p of [
      "/something(/|$)(.*)",
      "/something(/|$)(.*)?",
      "/api(/|$)(v[0-9]+)?(/.*)?",
      "/(?<service>[^/]+)(/.*)?",
      "/(?:something)(/|$)(.*)",
      "(/something)(/.*)?|/other(/.*)",
      "/([a-z]+)/([a-z]+)/?(.*)",
    ]) {
      agree(p, paths);
      agree(
        p,
        paths.map((s) => s.toUpperCase()),
        true,
      );
    }
  });

  test("greedy and lazy quantifiers", () => {
    const inputs = allStrings("ab", 5);
    for (const p of [
      "(a*)(a*)",
      "(a*?)(a*)",
      "(a+?)(a*)",
      "(a?)(a?)(a*)",
      "(a??)(a?)",
      "(a{1,3})(a*)",
      "(a{1,3}?)(a*)",
      "(a{2,}?)(a*)",
      "(.*)b(.*)",
      "(.*?)b(.*)",
      "(a|ab)(b*)",
      "(ab|a)(b*)",
      "([ab]*?)(b+)",
      "(a*)(b)?(a*)",
    ])
      agree(p, inputs);
  });

  test("alternation priority, nested and optional groups", () => {
    const inputs = allStrings("abc", 4);
    for (const p of [
      "(a)|(b)|(c)",
      "(a|(b))+",
      "((a)|(b))*",
      "((a)(b)?)*c?",
      "(a(b(c)?)?)?",
      "(?:(a)|(b))(?:(c)|(a))",
      "(a)?(b)?(c)?",
      "(?<x>a)(?<y>b)?c*",
      "(|a)(a|)",
      "(a|)*",
      "(?:a|())+",
    ])
      agree(p, inputs);
  });

  test("groups inside repetition keep the last iteration, cleared as JavaScript clears them", () => {
    const inputs = allStrings("abc", 5);
    for (const p of [
      "(?:(a)|b)*",
      "(?:(a)|(b))*",
      "(?:(a)|b){2}",
      "(?:(a)|b){1,3}",
      "(?:(a)|b){2,}?",
      "((a)|b)+",
      "(?:(a)(c)?|b)*",
      "(?:((a)|b)c?)*",
      "(?:(a)|b|())*",
    ])
      agree(p, inputs);
  });

  test("empty iterations (ECMAScript's rule that an optional iteration must consume)", () => {
    const inputs = allStrings("ab", 4);
    for (const p of [
      "(a?)*",
      "(a*)*",
      "(a*)+",
      "(a*)+?",
      "(a?)?",
      "(a*){2,}",
      "(a*){0,2}",
      "(?:a?b??)*",
      "(?:a?b??){0,2}",
      "(a?b??)*?",
      "((a*)*)*",
      "(?:(a)|())*b?",
      "(()|a)*",
      "(^|a)*",
      "(a|$)*",
      "()*",
      "(?:(?:)*)*",
    ])
      agree(p, inputs);
  });

  test("anchors, empty and whole-value matches", () => {
    for (const p of ["()", "(^)", "($)", "(^)(a)($)", "^(a)|(b)$", "x^|(a*)", "(a)$|(a)b"])
      agree(p, allStrings("ab", 3));
  });

  test("named groups are numbered, and their names are exposed", () => {
    const c = compileRegex("/(?<kind>[a-z]+)/(\\d+)(?:/(?<rest>.*))?");
    if (c.error !== undefined) throw new Error(c.error);
    expect(c.regex.groupCount).toBe(3);
    expect(c.regex.groupNames).toEqual([undefined, "kind", undefined, "rest"]);
    expect(c.regex.exec("/items/42")).toEqual(["/items/42", "items", "42", undefined]);
    expect(c.regex.exec("/items/42/a/b")).toEqual(["/items/42/a/b", "items", "42", "a/b"]);
    expect(c.regex.exec("/items/x")).toBeNull();
  });

  test("(?P<name>…) is a numbered group too, as in RE2 and PCRE (RegExp lacks the syntax)", () => {
    const c = compileRegex("/(?P<id>[0-9]+)/(x)");
    expect(c.regex?.groupNames).toEqual([undefined, "id", undefined]);
    expect(c.regex?.exec("/12/x")).toEqual(["/12/x", "12", "x"]);
  });
});

describe("randomized against RegExp", () => {
  test("2000 patterns over a small alphabet, every input up to length 4, with and without ignoreCase", () => {
    const inputs = allStrings("aAb", 4);
    let seed = 20240611;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 8) % n;
    };
    for (let i = 0; i < 2000; i++) {
      let g = 0;
      // RegExp refuses duplicate group names outside alternatives: every name is made unique.
      const pattern = randomPattern(rand, 3).replaceAll("(?<g>", () => `(?<g${g++}>`) || "()";
      agree(pattern, inputs, i % 2 === 1);
    }
  });
});

/**
 * A random pattern of our subset with groups of every kind, `depth` levels of nesting at most. Quantified
 * groups nest two deep at most: deeper, RegExp itself backtracks for seconds on four-character inputs.
 */
function randomPattern(rand: (n: number) => number, depth: number, quantified = 0): string {
  const atoms = ["a", "b", "A", ".", "[ab]", "[^a]", "[a-b]", "\\w", "\\W", "[^B]", "()"];
  const quants = ["", "", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?", "??", "{1,3}?", "{0}"];
  const piece = (): string => {
    const r = rand(12);
    if (depth > 0 && r < 4) {
      const open = ["(", "(?:", "(?<g>", "("][rand(4)];
      const q = quantified < 2 ? (quants[rand(quants.length)] as string) : "";
      return `${open}${randomPattern(rand, depth - 1, quantified + (q === "" ? 0 : 1))})${q}`;
    }
    if (r === 4) return ["^", "$"][rand(2)] as string;
    return `${atoms[rand(atoms.length)]}${quants[rand(quants.length)]}`;
  };
  const alt = () => Array.from({ length: rand(4) }, piece).join("");
  return Array.from({ length: 1 + (rand(3) === 0 ? 1 : 0) + (rand(6) === 0 ? 1 : 0) }, alt).join("|");
}

describe("exec stays linear on hostile input", () => {
  const timed = (pattern: string, input: string) => {
    const c = compileRegex(pattern);
    if (c.error !== undefined) throw new Error(c.error);
    c.regex.exec("warm");
    const started = performance.now();
    const result = c.regex.exec(input);
    return { result, ms: performance.now() - started };
  };
  // Each of these takes RegExp exponential or polynomial time; the bounds are generous for loaded CI.
  test("(a*)*b on 20k a's", () => {
    const { result, ms } = timed("(a*)*b", "a".repeat(20_000));
    expect(result).toBeNull();
    expect(ms).toBeLessThan(500);
  });
  test("(a*)* and (a|a)* on 20k a's match, with the last iteration's group", () => {
    const a = "a".repeat(20_000);
    expect(timed("(a*)*", a).result).toEqual([a, a]);
    expect(timed("(?:(a)|(a))*", a).result).toEqual([a, "a", undefined]);
  });
  test("(.*)(.*)(.*)x and optional digit groups on 8 KB", () => {
    expect(timed("(.*)(.*)(.*)x", "a".repeat(8192)).ms).toBeLessThan(500);
    const { result, ms } = timed("/(\\d+)?(\\d+)?(\\d+)?(\\d+)?x", `/${"1".repeat(8000)}`);
    expect(result).toBeNull();
    expect(ms).toBeLessThan(500);
  });
  test("the largest accepted capture program on the longest request line stays bounded", () => {
    // Five groups in repetitions of 1,000 is just under the bound; it matches 5,000 characters at most.
    const { result, ms } = timed("(\\w){0,1000}".repeat(5), "a".repeat(5000));
    expect(result?.length).toBe(6);
    expect(ms).toBeLessThan(4000);
  });
  test("many groups inside large repetitions are refused with a way out", () => {
    const c = compileRegex("(\\w){0,1000}".repeat(6));
    expect(c.error).toContain("too many capture groups inside repetitions");
    expect(c.error).toContain("(?:…)");
    expect(compileRegex("(?:\\w){0,1000}".repeat(6)).error).toBeUndefined();
  });
});
