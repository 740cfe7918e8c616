/**
 * Golden inputs loaded the way the folder source and `gatehouse translate -f` load them
 * (src/sources/file): the same YAML parsing, schemas, namespace defaulting and duplicate rule, and the
 * same problems, so a bad-input case's .out.yaml shows what a user would be told (file, document,
 * object, reason) next to what was still served.
 */
import { basename } from "node:path";
import { assemble, mergeFile } from "../../src/sources/file/assemble.ts";
import { parseFileText } from "../../src/sources/file/documents.ts";
import { loadFiles, loadProblems } from "../../src/sources/file/index.ts";
import type { LoadProblem } from "../../src/sources/file/problems.ts";
import type { ResourceSnapshot } from "../../src/sources/snapshot.ts";

export interface LoadedCase {
  readonly snapshot: ResourceSnapshot;
  /** Load problems first in load order; `file` is the file's base name, so outputs do not depend on the checkout. */
  readonly problems: readonly LoadProblem[];
}

/** A golden case file, read with `loadFiles`, the function behind `gatehouse translate -f`. */
export function loadCaseFile(path: string): Promise<LoadedCase> {
  return loadCaseFiles([path]);
}

/**
 * Golden case files read together, in the order given, as `gatehouse translate -f a.yaml -f b.yaml`
 * reads them: a folder's shared objects (its `gatewayclass.yaml`) first, then the case's `.in.yaml`.
 * Each file keeps its own document indices; the first object of a kind/namespace/name wins.
 */
export async function loadCaseFiles(paths: readonly string[]): Promise<LoadedCase> {
  const load = await loadFiles(paths);
  return {
    snapshot: load.snapshot,
    problems: loadProblems(load).map((p) => ({ ...p, file: basename(p.file) })),
  };
}

/**
 * YAML text held in a test, through the same steps `loadFiles` runs after reading a file (parse,
 * last-good merge with no history, assemble), reported as from `inline.yaml`.
 */
export function loadCase(text: string): LoadedCase {
  const { load } = assemble([mergeFile({ file: "inline.yaml", parse: parseFileText(text) })]);
  return { snapshot: load.snapshot, problems: loadProblems(load) };
}
