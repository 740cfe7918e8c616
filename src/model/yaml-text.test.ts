/**
 * `yamlText` against the yaml package's printing (dump.ts `yamlPackageText`): for every value it either
 * declines (undefined) or prints exactly the package's text. Values: every golden output, edge cases,
 * and generated values full of strings the package quotes.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { yamlPackageText } from "./dump.ts";
import { yamlText } from "./yaml-text.ts";

function disagreement(value: unknown): string | undefined {
  const text = yamlText(value);
  if (text === undefined) return undefined;
  const reference = yamlPackageText(value);
  return text === reference ? undefined : `yaml ${JSON.stringify(reference)} ≠ ours ${JSON.stringify(text)}`;
}

describe("yamlText", () => {
  test("prints every golden output it does not decline as the yaml package does", () => {
    const root = join(import.meta.dir, "../../test/golden");
    const outputs = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".out.yaml"),
    );
    expect(outputs.length).toBeGreaterThan(30);
    for (const file of outputs) {
      const value = parse(readFileSync(join(root, file), "utf8"));
      if (yamlText(value) === undefined) continue; // a multi-line message, a certificate: the package prints it
      expect([file, disagreement(value)]).toEqual([file, undefined]);
    }
  });

  test.each([
    ["an empty map", {}],
    ["an empty list", []],
    ["a leafy map at the root", { a: 1, b: [] }],
    ["nested lists", [[1, [2, {}]], { a: { b: [{ c: null }] } }]],
    ["numbers", { a: -0, b: Number.NaN, c: -Infinity, d: 1e21, e: 0.1, f: 12 }],
    [
      "strings read back as other types",
      ["", "1", "-1.5", ".5", "1e3", "0x1F", "0o17", "true", "NULL", "~", ".inf"],
    ],
    [
      "indicators",
      ["-", "- a", "? a", ":a", "a:", "a: b", "#a", "a #b", "a#b", "&a", "*a", "!a", "|", ">a", "%a"],
    ],
    ["quotes", ["it's", 'say "hi"', `both ' and "`, "back\\slash", "[a]", "{a}", "a,b", "é"]],
    ["keys", { "": 1, "1": 2, "a b": 3, "a: b": 4, "it's": 5, '"q"': 6, "[x]": { y: "a,b" } }],
  ])("prints %s as the yaml package does", (_, value) => {
    expect(yamlText(value)).toBeDefined();
    expect(disagreement(value)).toBeUndefined();
  });

  test.each([
    ["a multi-line string", { a: "x\ny" }],
    ["a control character", { a: "x\u0007" }],
    ["a document marker", ["--- x"]],
    ["a key over 1000 characters", { ["k".repeat(1001)]: 1 }],
    ["undefined in a list", [undefined]],
    ["a bigint", { a: 1n }],
  ])("declines %s", (_, value) => {
    expect(yamlText(value)).toBeUndefined();
  });

  test("prints generated values as the yaml package does", () => {
    let seed = 7;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const pieces = [..."ab 09-_.:#,[]{}&*!|>'\"%@`?~/\\", "é", "---", "0x", "1e3", "null", "true", ".inf"];
    const string = () => Array.from({ length: Math.floor(random() * 5) }, () => pick(pieces)).join("");
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.4)
        return pick([
          string,
          string,
          string,
          () => Math.floor(random() * 100) - 50,
          () => null,
          () => true,
        ])();
      if (r < 0.7) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 3) }, () => [string(), value(depth + 1)]),
      );
    };
    let printed = 0;
    for (let i = 0; i < 3000; i++) {
      const v = value(0);
      if (yamlText(v) !== undefined) printed++;
      expect([v, disagreement(v)]).toEqual([v, undefined]);
    }
    expect(printed).toBeGreaterThan(2000); // the comparison is not vacuous
  });
});
