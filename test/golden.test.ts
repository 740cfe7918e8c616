/**
 * Golden tests for translate: each `test/golden/<case>.in.yaml` (Kubernetes objects) must translate to
 * exactly `<case>.out.yaml`. Inputs are read by the folder source's `loadFiles`, so load problems
 * (malformed YAML, unknown fields) are checked with their file and document too.
 * `UPDATE_GOLDEN=1 bun test test/golden.test.ts` rewrites the .out files; review them as diffs.
 * See test/golden/README.md.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dumpTranslateResult } from "../src/model/dump.ts";
import { type TranslateOptions, translate } from "../src/translate/translate.ts";
import { loadCaseFile } from "./golden/load.ts";

const dir = join(import.meta.dir, "golden");
const update = process.env.UPDATE_GOLDEN === "1";
const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".in.yaml"))
  .map((f) => f.slice(0, -".in.yaml".length))
  .sort();

test("there are golden cases", () => {
  expect(cases.length).toBeGreaterThanOrEqual(30);
});

for (const name of cases) {
  test(`golden ${name}`, async () => {
    const loaded = await loadCaseFile(join(dir, `${name}.in.yaml`));
    const optionsFile = join(dir, `${name}.options.json`);
    const options: Partial<TranslateOptions> = existsSync(optionsFile)
      ? JSON.parse(readFileSync(optionsFile, "utf8"))
      : {};
    const result = translate(loaded.snapshot, options);
    const actual = dumpTranslateResult({
      model: result.model,
      problems: [...loaded.problems, ...result.problems],
      statuses: result.statuses,
    });
    const outFile = join(dir, `${name}.out.yaml`);
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
