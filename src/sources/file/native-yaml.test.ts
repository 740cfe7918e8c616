/**
 * `nativeDocuments` (Bun.YAML where it reads as the yaml package does) against the yaml package: on
 * every input it either declines (undefined) or returns exactly the package's documents, and it
 * declines wherever the package refuses the text. Inputs: the repository's YAML, edge cases, and
 * generated documents full of repeated keys and odd scalars.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseFileText, yamlPackageDocuments } from "./documents.ts";
import { nativeDocuments } from "./native-yaml.ts";

/** undefined when the native reading agrees with the yaml package's (or declined); else what differs. */
function disagreement(text: string): string | undefined {
  const native = nativeDocuments(text);
  if (native === undefined) return undefined;
  const reference = yamlPackageDocuments(text);
  if (!("documents" in reference))
    return `native read a text the yaml package refuses: ${reference.syntaxError}`;
  const same =
    reference.documents.length === native.length &&
    reference.documents.every((d, i) => Bun.deepEquals(d ?? null, native[i], true));
  return same ? undefined : `yaml ${JSON.stringify(reference.documents)} ≠ native ${JSON.stringify(native)}`;
}

const repo = join(import.meta.dir, "../../..");

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name.startsWith(".")) return [];
    const path = join(dir, e.name);
    return e.isDirectory() ? yamlFiles(path) : /\.ya?ml$/.test(e.name) ? [path] : [];
  });
}

describe("nativeDocuments", () => {
  test("reads the examples natively, as the yaml package does", () => {
    for (const file of yamlFiles(join(repo, "examples"))) {
      const text = readFileSync(file, "utf8");
      expect(nativeDocuments(text)).toBeDefined();
      expect(disagreement(text)).toBeUndefined();
    }
  });

  test("agrees with the yaml package on every YAML file of the repository", () => {
    const files = [...yamlFiles(join(repo, "test")), ...yamlFiles(join(repo, "deploy"))];
    expect(files.length).toBeGreaterThan(100);
    for (const file of files)
      expect([file, disagreement(readFileSync(file, "utf8"))]).toEqual([file, undefined]);
  });

  test.each([
    ["a repeated key", "a: 1\na: 2\n"],
    ["a repeated quoted key", "'a': 1\n\"a\": 2\n"],
    ["a repeated key in a flow mapping", "m: { a: 1, a: 2 }\n"],
    ["a repeated key beside a keyless flow entry", "m: { a, a: 1 }\n"],
    ["a merge key", "base: &b { x: 1 }\nd:\n  <<: *b\n"],
    ["an alias", "a: &x [1, 2]\nb: *x\n"],
    ["a tag", "a: !!str 1\n"],
    ["a complex key", "[a]: 1\n"],
    ["an explicit key", "? a\n: 1\n"],
    ["a null key", "~: a\n"],
    ["a directive", "%YAML 1.1\n---\na: yes\n"],
    ["a document end", "a: 1\n...\n"],
    ["content on a document marker", "--- |\n  text\n"],
    ["a signed hex number", "a: -0x1F\n"],
    ["a tab", "a:\tb\n"],
    ["a CR", "a: 1\r\nb: 2\r\n"],
    ["a multi-line flow sequence", "a: [1,\n  2]\n"],
    ["a multi-line quoted scalar", "a: 'x\n  y'\n"],
    ["a syntax error", "a: [1\n"],
    ["a nested compact mapping", "a: b: c\n"],
    ["a key after a sequence entry on one line", "a: - b\n"],
  ])("declines %s", (_, text) => {
    expect(nativeDocuments(text)).toBeUndefined();
  });

  test.each([
    ["documents after a leading comment", "# c\n---\na: 1\n---\n---\nb: 2\n", [{ a: 1 }, null, { b: 2 }]],
    ["an empty file", "", []],
    ["a trailing marker", "a: 1\n---\n", [{ a: 1 }, null]],
    ["a top-level sequence", "- 1\n- 2\n", [[1, 2]]],
    ["a kept block scalar before a marker", "c: |+\n  x\n\n---\nd: 1\n", [{ c: "x\n\n" }, { d: 1 }]],
    ["flow collections", "m: { a: [1, b: 2], c: {} }\n", [{ m: { a: [1, { b: 2 }], c: {} } }]],
  ])("reads %s as the yaml package does", (_, text, documents) => {
    expect(nativeDocuments(text)).toEqual(documents);
    expect(disagreement(text)).toBeUndefined();
  });

  test('"billion laughs" still meets the yaml package\'s alias limit: the whole file is refused', () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 9; i++)
      levels.push(
        `l${i}: &l${i} [${Array(9)
          .fill(i === 1 ? "*a" : `*l${i - 1}`)
          .join(", ")}]`,
      );
    const text = `${levels.join("\n")}\n`;
    expect(nativeDocuments(text)).toBeUndefined();
    expect(parseFileText(text).syntaxError).toStartWith("YAML error in document 0: Excessive alias count");
  });

  test("agrees with the yaml package on generated documents", () => {
    let seed = 42;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const scalars = ["a", "1", "-1", "1.5", "1e3", "true", "null", "~", "yes", "0o17", "0x1F", ".inf", "a b"];
    scalars.push(
      "a:b",
      "http://x/y?z=1",
      "a#b",
      "it's",
      '"q"',
      "'s'",
      "'it''s'",
      '"a # b"',
      '"\\t\\u00e9"',
      "é",
    );
    const keys = ["a", "b", "name", "1", "true", '"a"', "'b'", "a b", "__proto__"];
    const flow = (depth: number): string => {
      if (depth > 1 || random() < 0.5) return pick(scalars);
      const items = Array.from({ length: Math.floor(random() * 3) }, () => flow(depth + 1));
      if (random() < 0.5) return `[${items.join(", ")}]`;
      return items.length === 0 ? "{}" : `{ ${items.map((v) => `${pick(keys)}: ${v}`).join(", ")} }`;
    };
    const block = (indent: number, depth: number): string[] => {
      const pad = " ".repeat(indent);
      const sequence = random() < 0.3;
      return Array.from({ length: 1 + Math.floor(random() * 3) }).flatMap(() => {
        const head = sequence ? "- " : `${pick(keys)}: `;
        const r = random();
        if (depth < 2 && r < 0.3)
          return [`${pad}${head.trimEnd()}`, ...block(indent + pick([1, 2]), depth + 1)];
        if (r < 0.4)
          return [`${pad}${head}${pick(["|", "|-", "|+", ">"])}`, `${pad}  text`, "", `${pad}  more`];
        return [`${pad}${head}${random() < 0.5 ? flow(0) : pick(scalars)}${pick(["", " # c: d"])}`];
      });
    };
    let native = 0;
    for (let i = 0; i < 1500; i++) {
      const documents = Array.from({ length: 1 + Math.floor(random() * 2) }, () => block(0, 0).join("\n"));
      const text = `${documents.join("\n---\n")}\n`;
      if (nativeDocuments(text) !== undefined) native++;
      expect([text, disagreement(text)]).toEqual([text, undefined]);
    }
    expect(native).toBeGreaterThan(300); // the comparison is not vacuous
  });
});
