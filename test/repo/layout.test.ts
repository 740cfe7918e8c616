/**
 * The maps against the tree: README's "Layout" block names every top-level folder of src/ (and every
 * path it names exists), src/translate/README.md and src/proxy/README.md name every subfolder, and no
 * folder of src/ holds more source files flat than a reader can take in at a glance, and no file is
 * longer than the brief allows.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dir, "../..");
const src = join(root, "src");

/** At most this many source files (tests aside) directly in one folder of src/. */
const MAX_FLAT_SOURCES = 20;

function subfolders(dir: string): string[] {
  return readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
}

function allFolders(dir: string): string[] {
  return [dir, ...subfolders(dir).flatMap((name) => allFolders(join(dir, name)))];
}

/** The fenced block that follows `## Layout` in the README. */
function layoutBlock(readme: string): string {
  const section = readme.split("\n## Layout\n")[1];
  if (section === undefined) throw new Error("README.md has no '## Layout' section");
  const block = /```\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("README.md '## Layout' has no fenced block");
  return block[1];
}

describe("README layout", () => {
  const block = layoutBlock(readFileSync(join(root, "README.md"), "utf8"));
  const named = block
    .split("\n")
    .map((line) => /^(\S+)/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined);

  test("names every top-level folder of src/", () => {
    const missing = subfolders(src).filter((name) => !named.includes(`src/${name}/`));
    expect(missing).toEqual([]);
  });

  test("names only paths that exist", () => {
    const gone = named.filter((path) => {
      try {
        statSync(join(root, path));
        return false;
      } catch {
        return true;
      }
    });
    expect(gone).toEqual([]);
  });
});

describe.each(["translate", "proxy"])("src/%s/README.md", (area) => {
  test("names every subfolder", () => {
    const readme = readFileSync(join(src, area, "README.md"), "utf8");
    const folders = allFolders(join(src, area))
      .slice(1)
      .map((dir) => `${relative(join(src, area), dir)}/`);
    expect(folders.filter((f) => !readme.includes(`\`${f}\``))).toEqual([]);
  });
});

test(`no folder of src/ holds more than ${MAX_FLAT_SOURCES} source files flat`, () => {
  const crowded = allFolders(src)
    .map((dir) => ({
      dir: relative(root, dir),
      sources: readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts")).length,
    }))
    .filter((f) => f.sources > MAX_FLAT_SOURCES);
  expect(crowded).toEqual([]);
});

/** Files are kept under this many lines (the brief's rule), tests and benchmarks too. */
const MAX_LINES = 400;

test(`no TypeScript file of src/, test/, bench/ or scripts/ has ${MAX_LINES} lines or more`, () => {
  const long: string[] = [];
  for (const top of ["src", "test", "bench", "scripts"])
    for (const dir of allFolders(join(root, top)))
      for (const f of readdirSync(dir))
        if (f.endsWith(".ts") && statSync(join(dir, f)).isFile()) {
          const lines = readFileSync(join(dir, f), "utf8").split("\n").length - 1;
          if (lines >= MAX_LINES) long.push(`${relative(root, join(dir, f))}: ${lines}`);
        }
  expect(long).toEqual([]);
});
