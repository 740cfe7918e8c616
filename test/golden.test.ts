/**
 * Golden tests for translate: each `test/golden/<folder>/<case>.in.yaml` (Kubernetes objects) must
 * translate to exactly `<folder>/<case>.out.yaml`. Inputs are read by the folder source's `loadFiles`, so
 * load problems (malformed YAML, unknown fields) are checked with their file and document too.
 * Options: the folder's `options.json`, with the case's `<case>.options.json` merged over it (a `null`
 * value removes a folder default). Shared objects: the folder's `gatewayclass.yaml` is read before each
 * case, unless the case has its own `<case>.gatewayclass.yaml` (an empty one: no GatewayClass).
 * `UPDATE_GOLDEN=1 bun test test/golden.test.ts` rewrites the .out files; review them as diffs.
 * See test/golden/README.md.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dumpTranslateResult } from "../src/model/dump.ts";
import { type TranslateOptions, translate } from "../src/translate/translate.ts";
import { loadCaseFiles } from "./golden/load.ts";

const root = join(import.meta.dir, "golden");
const update = process.env.UPDATE_GOLDEN === "1";

/** Per-folder files that are not part of one case. */
const folderFiles = new Set(["options.json", "gatewayclass.yaml"]);
/** What a case's files end with; `<case>.in.yaml` is the one that makes a case. */
const caseSuffixes = [".in.yaml", ".out.yaml", ".options.json", ".gatewayclass.yaml"];

const folders = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const cases = folders.flatMap((folder) =>
  readdirSync(join(root, folder))
    .filter((f) => f.endsWith(".in.yaml"))
    .map((f) => `${folder}/${f.slice(0, -".in.yaml".length)}`)
    .sort(),
);

function readJson(file: string): Record<string, unknown> {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
}

/** The folder's options.json with the case's options merged over it; `null` removes a key. `base`
 * is the case's path without `.in.yaml`. */
function caseOptions(folder: string, base: string): Partial<TranslateOptions> {
  const merged = { ...readJson(join(root, folder, "options.json")), ...readJson(`${base}.options.json`) };
  for (const [key, value] of Object.entries(merged)) if (value === null) delete merged[key];
  return merged as Partial<TranslateOptions>;
}

/** The files to read for a case, in order: its own or else its folder's gatewayclass.yaml, then the case. */
function caseFiles(folder: string, base: string): string[] {
  const own = `${base}.gatewayclass.yaml`;
  const shared = join(root, folder, "gatewayclass.yaml");
  const first = existsSync(own) ? [own] : existsSync(shared) ? [shared] : [];
  return [...first, `${base}.in.yaml`];
}

test("there are golden cases", () => {
  expect(cases.length).toBeGreaterThanOrEqual(30);
});

test("every golden file belongs to a folder and a case", () => {
  const stray: string[] = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isFile() && caseSuffixes.some((s) => e.name.endsWith(s)))
    .map((e) => e.name);
  for (const folder of folders)
    for (const file of readdirSync(join(root, folder))) {
      if (folderFiles.has(file)) continue;
      const suffix = caseSuffixes.find((s) => file.endsWith(s));
      const name = suffix === undefined ? undefined : `${folder}/${file.slice(0, -suffix.length)}`;
      if (name === undefined || !cases.includes(name)) stray.push(`${folder}/${file}`);
    }
  expect(stray).toEqual([]);
});

for (const name of cases) {
  test(`golden ${name}`, async () => {
    const [folder = ""] = name.split("/");
    const path = join(root, name);
    const loaded = await loadCaseFiles(caseFiles(folder, path));
    const options = caseOptions(folder, path);
    const result = translate(loaded.snapshot, options);
    const actual = dumpTranslateResult({
      model: result.model,
      problems: [...loaded.problems, ...result.problems],
      statuses: result.statuses,
    });
    const outFile = `${path}.out.yaml`;
    if (update || !existsSync(outFile)) {
      writeFileSync(outFile, actual);
      if (!update) throw new Error(`${name}.out.yaml was missing; written now, review it`);
      return;
    }
    expect(actual).toBe(readFileSync(outFile, "utf8"));
    // Again on the same objects: every HTTPRoute's kept translation is reused, so a step of the first
    // pass that changed a kept result would show here (and the self-check of test/setup.ts throws).
    const again = translate(loaded.snapshot, options);
    expect(
      dumpTranslateResult({
        model: again.model,
        problems: [...loaded.problems, ...again.problems],
        statuses: again.statuses,
      }),
    ).toBe(actual);
  });
}
