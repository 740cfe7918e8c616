import { readFile, stat } from "node:fs/promises";
import { sep } from "node:path";
import { type Logger, logger } from "../../observability/logger.ts";
import {
  assemble,
  type FileMemory,
  type FileResult,
  type FolderLoad,
  mergeFile,
  type SourceError,
} from "./assemble.ts";
import { parseFileText } from "./documents.ts";
import { listYamlFiles } from "./walk.ts";

export const fileSourceLog: Logger = logger.child({ component: "file-source" });

/**
 * Read the whole folder once, applying the last-good rules against `memory` (what each file served on
 * the previous read; empty for a first read). Throws only when `dir` itself cannot be listed.
 */
export async function readFolder(
  dir: string,
  memory: FileMemory = new Map(),
): Promise<{ load: FolderLoad; memory: FileMemory }> {
  const listing = await listYamlFiles(dir);
  const read = await Promise.all(listing.files.map((f) => readOne(f, memory.get(f))));
  const results = read.filter((r): r is FileResult => r !== undefined);
  // A sub-folder we cannot list right now: what its files served keeps serving.
  for (const [file, entries] of memory) {
    if (listing.unreadableDirs.some((d) => file.startsWith(d.path + sep)))
      results.push({ file, entries, errors: [], skipped: [] });
  }
  results.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const dirErrors = listing.unreadableDirs.map((d) => ({
    file: d.path,
    docIndex: -1,
    reason: `cannot list folder: ${d.reason}; what its files served before keeps serving`,
  }));
  return assemble(results, dirErrors);
}

/** Read a file and apply the last-good rules; undefined when it vanished between listing and reading. */
async function readOne(file: string, previous: FileResult["entries"] | undefined) {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return mergeFile({ file, unreadable: `cannot read file: ${(err as Error).message}` }, previous);
  }
  return mergeFile({ file, parse: parseFileText(text) }, previous);
}

/** One read of the folder, logged. Rejects when the folder cannot be listed. */
export async function loadFolder(dir: string): Promise<FolderLoad> {
  const { load } = await readFolder(dir);
  logLoad(load);
  return load;
}

/**
 * Read the given files (folders are expanded as by `loadFolder`), in the order given, with the same
 * rules. For `gatehouse translate -f`: nothing is logged, the caller prints `errors`; a path that cannot
 * be read is an error with `docIndex: -1`.
 */
export async function loadFiles(paths: readonly string[]): Promise<FolderLoad> {
  const results: FileResult[] = [];
  const errors: SourceError[] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    let files: readonly string[] = [path];
    try {
      if ((await stat(path)).isDirectory()) files = (await listYamlFiles(path)).files;
    } catch (err) {
      errors.push({ file: path, docIndex: -1, reason: `cannot read: ${(err as Error).message}` });
      continue;
    }
    for (const file of files.filter((f) => !seen.has(f))) {
      seen.add(file);
      const result = await readOne(file, undefined);
      if (result) results.push(result);
      else errors.push({ file, docIndex: -1, reason: "cannot read: the file disappeared" });
    }
  }
  return assemble(results, errors).load;
}

/**
 * Log a load: one `warn` per error, and one `info` per unknown kind (with how many objects and which
 * files), so a folder full of Deployments does not flood the log.
 */
export function logLoad(load: FolderLoad, log: Logger = fileSourceLog): void {
  for (const e of load.errors) {
    const what = e.docIndex === -1 ? "file not loaded" : "object not loaded";
    log.warn(what, { file: e.file, doc: e.docIndex, kind: e.kind, name: e.name, reason: e.reason });
  }
  const byKind = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  for (const s of load.skippedKinds) {
    byKind.set(s.kind, (byKind.get(s.kind) ?? new Set()).add(s.file));
    counts.set(s.kind, (counts.get(s.kind) ?? 0) + 1);
  }
  for (const [kind, files] of byKind)
    log.info("skipped objects of a kind gatehouse does not read", {
      kind,
      count: counts.get(kind),
      files: [...files],
    });
}
