import { describe, expect, test } from "bun:test";
import { foldCase } from "./casefold.ts";
import { compileRegex } from "./regex.ts";

const hex = (c: number) => `\\u${c.toString(16).padStart(4, "0")}`;

/**
 * Code units Bun's RegExp does not fold although toUpperCase, which ECMAScript's Canonicalize is defined
 * by, does: letters new in Unicode 16 and the older letters they pair with (ƛ and Ƛ, ɤ and Ɤ), missing
 * from the case tables JavaScriptCore's RegExp carries. We follow the standard; here alone RegExp differs.
 */
const UNICODE_16 = new Set([
  0x019b, 0x0264, 0x1c89, 0x1c8a, 0xa7cb, 0xa7cc, 0xa7cd, 0xa7ce, 0xa7cf, 0xa7d2, 0xa7d3, 0xa7d4, 0xa7d5,
  0xa7da, 0xa7db, 0xa7dc,
]);

/** Code units that are, or fold to, something else: only these can match a unit other than themselves. */
function cased(): number[] {
  const out: number[] = [];
  for (let c = 0; c <= 0xffff; c++) {
    const s = String.fromCharCode(c);
    if (s.toUpperCase() !== s || s.toLowerCase() !== s || foldCase([c, c]).length > 2) out.push(c);
  }
  return out;
}

describe("case folding matches RegExp's i flag over the whole BMP", () => {
  const candidates = cased();
  const haystack = String.fromCharCode(...candidates);

  test("every cased code unit folds to exactly what RegExp matches", () => {
    const wrong: string[] = [];
    for (const c of candidates) {
      const theirs = new Set([c]);
      for (const m of haystack.matchAll(new RegExp(hex(c), "gi"))) theirs.add(m[0].charCodeAt(0));
      const ours = new Set<number>();
      const r = foldCase([c, c]);
      for (let i = 0; i < r.length; i += 2)
        for (let u = r[i] as number; u <= (r[i + 1] as number); u++) ours.add(u);
      const same = theirs.size === ours.size && [...theirs].every((u) => ours.has(u));
      if (!same && !UNICODE_16.has(c))
        wrong.push(`${hex(c)}: RegExp ${[...theirs].map(hex)}, ours ${[...ours].map(hex)}`);
    }
    expect(wrong).toEqual([]);
  });

  test("no other code unit matches anything but itself, in RegExp as in ours", () => {
    const isCased = new Set(candidates);
    // A class of uncased units, by blocks: RegExp matching a cased unit, or more units than the block
    // holds, would reveal a folding we lack.
    const others: number[] = [];
    for (let c = 0; c <= 0xffff; c++) if (!isCased.has(c)) others.push(c);
    let everything = "";
    for (let i = 0; i < others.length; i += 4096)
      everything += String.fromCharCode(...others.slice(i, i + 4096));
    for (let i = 0; i < others.length; i += 1024) {
      const block = others.slice(i, i + 1024);
      const re = new RegExp(`[${block.map(hex).join("")}]`, "gi");
      expect(haystack.match(re)).toBeNull();
      expect(everything.match(re)?.length).toBe(block.length);
      for (const c of block) if (foldCase([c, c]).length !== 2) throw new Error(`${hex(c)} folds`);
    }
  });
});

describe("ignoreCase patterns agree with RegExp's i flag", () => {
  const alphabet = "aAkKsS\u017f\u212a\u00b5\u03bc\u039c\u00df\u1e9e\u0130i\u0131I_9 -\u00e9\u00c9";
  const inputs = [""];
  for (const x of alphabet) {
    inputs.push(x);
    for (const y of alphabet) inputs.push(x + y);
  }
  test("literals, classes, ranges, negations and escapes", () => {
    for (const p of [
      "a",
      "k",
      "s",
      "\u00b5",
      "\u00e9",
      "\u00df",
      "[a-z]+",
      "[A-Z]+",
      "[^a-z]+",
      "[^a]",
      "[^\\W]+",
      "[^\\w]+",
      "\\w+",
      "\\W+",
      "[\\W_]+",
      "[K-k]",
      "[Z-a]",
      "[\\u0100-\\u017f]+",
      "[\\u00c0-\\u00ff]+",
      "[\\u0370-\\u03ff]+",
      "[^\\u0370-\\u03ff]+",
      ".+",
      "[\\s\\S]",
      "[^\\d\\s]+",
      "(?:i|I)+",
      "\\u0130|\\u0131",
      "/Path/(x|Y)?",
    ]) {
      const c = compileRegex(p, { ignoreCase: true });
      if (c.error !== undefined) throw new Error(`${p}: ${c.error}`);
      const reference = new RegExp(`^(?:${p})$`, "i");
      for (const s of inputs)
        if (c.regex.test(s) !== reference.test(s))
          throw new Error(`${JSON.stringify(p)} on ${JSON.stringify(s)}: ours ${c.regex.test(s)}`);
    }
  });

  test("the flag is part of the cache key", () => {
    const plain = compileRegex("/Items/[a-z]+");
    const folded = compileRegex("/Items/[a-z]+", { ignoreCase: true });
    expect(folded).not.toBe(plain);
    expect(compileRegex("/Items/[a-z]+", { ignoreCase: true })).toBe(folded);
    expect(compileRegex("/Items/[a-z]+", { ignoreCase: false })).toBe(plain);
    expect(plain.regex?.test("/ITEMS/ABC")).toBe(false);
    expect(folded.regex?.test("/ITEMS/ABC")).toBe(true);
    expect(folded.regex?.exec("/items/Abc")).toEqual(["/items/Abc"]);
  });

  test("a leading (?i) is the flag for the whole pattern, groups numbered as without it", () => {
    const flagged = compileRegex("(?i)/Items/([a-z]+)");
    if (flagged.error !== undefined) throw new Error(flagged.error);
    expect(flagged.regex.test("/ITEMS/ABC")).toBe(true);
    expect(flagged.regex.exec("/items/Abc")).toEqual(["/items/Abc", "Abc"]);
    expect(flagged.regex.groupCount).toBe(1);
    expect(flagged.regex.test("/ITEMS/AB1")).toBe(false);
    for (const s of inputs) {
      const reference = /^(?:[a-z]s?)$/i.test(s);
      expect(compileRegex("(?i)[a-z]s?").regex?.test(s)).toBe(reference);
    }
  });
});
