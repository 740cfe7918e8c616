import { readFile, stat } from "node:fs/promises";
import { sep } from "node:path";
import { type Logger, logger } from "../../observability/logger.ts";
import { type FirstSeen, isGatewayAPIVersion, skippedKey, skippedMessage } from "../skipped.ts";
import {
  assemble,
  type FileMemory,
  type FileResult,
  type FolderLoad,
  mergeFile,
  type SkippedObject,
  type SourceError,
} from "./assemble.ts";
import { type FileParse, parseFileText } from "./documents.ts";
import { listYamlFiles } from "./walk.ts";

export const fileSourceLog: Logger = logger.child({ component: "file-source" });

/**
 * Each file's last text, as its length and a 64-bit hash, and what it parsed to. Parsing (YAML +
 * schemas) is nearly all the cost of a re-read (about 1 s for 10k routes), and a change usually touches
 * one file: the others are reused when their text is the same. The text itself is not kept: the parse
 * holds what serving needs, and the text of every file would stay resident beside it. Parses are
 * immutable, so sharing them between reads is safe.
 */
export type ParseCache = Map<
  string,
  { readonly length: number; readonly hash: bigint; readonly parse: FileParse }
>;

function textHash(text: string): bigint {
  return BigInt(Bun.hash(text));
}

/**
 * Read the whole folder once, applying the last-good rules against `memory` (what each file served on
 * the previous read; empty for a first read). Throws only when `dir` itself cannot be listed. With
 * `cache`, unchanged files are not parsed again (and files that are gone leave the cache).
 */
export async function readFolder(
  dir: string,
  memory: FileMemory = new Map(),
  cache?: ParseCache,
): Promise<{ load: FolderLoad; memory: FileMemory }> {
  const listing = await listYamlFiles(dir);
  if (cache !== undefined) {
    const listed = new Set(listing.files);
    for (const file of cache.keys()) if (!listed.has(file)) cache.delete(file);
  }
  const read = await Promise.all(listing.files.map((f) => readOne(f, memory.get(f), cache)));
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
async function readOne(file: string, previous: FileResult["entries"] | undefined, cache?: ParseCache) {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return mergeFile({ file, unreadable: `cannot read file: ${(err as Error).message}` }, previous);
  }
  const hit = cache?.get(file);
  const hash = cache === undefined ? 0n : textHash(text);
  if (hit !== undefined && hit.length === text.length && hit.hash === hash)
    return mergeFile({ file, parse: hit.parse }, previous);
  const parse = parseFileText(text);
  cache?.set(file, { length: text.length, hash, parse });
  return mergeFile({ file, parse }, previous);
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
 * Log a load: one `warn` per error; one `warn` per object of a Gateway API kind Gatehouse does not
 * serve (a BackendTLSPolicy…) and per served object with unknown fields, the first time `seen`
 * meets it (every time without `seen`); and one `info` per other unknown kind (with how many objects and
 * which files), so a folder full of Deployments does not flood the log.
 */
export function logLoad(load: FolderLoad, log: Logger = fileSourceLog, seen?: FirstSeen): void {
  for (const e of load.errors) {
    const what = e.docIndex === -1 ? "file not loaded" : "object not loaded";
    log.warn(what, { file: e.file, doc: e.docIndex, kind: e.kind, name: e.name, reason: e.reason });
  }
  const gatewayAPI = load.skippedKinds.filter((s) => isGatewayAPIVersion(s.apiVersion));
  const keyOf = (s: SkippedObject) => `${s.file}|${skippedKey(s)}`;
  const unknownKeyOf = (u: SourceError) => `${u.file}|${u.kind}/${u.name}|${u.reason}`;
  const keys = [...gatewayAPI.map(keyOf), ...load.unknownFields.map(unknownKeyOf)];
  const fresh = new Set(seen ? seen.fresh(keys) : keys);
  for (const u of load.unknownFields) {
    if (!fresh.has(unknownKeyOf(u))) continue;
    log.warn("object loaded without fields gatehouse does not read", {
      file: u.file,
      doc: u.docIndex,
      kind: u.kind,
      name: u.name,
      reason: u.reason,
    });
  }
  for (const s of gatewayAPI) {
    if (!fresh.has(keyOf(s))) continue;
    const name = s.namespace ? `${s.namespace}/${s.name}` : s.name;
    log.warn(skippedMessage(s), { kind: s.kind, name, file: s.file, doc: s.docIndex });
  }
  const byKind = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  for (const s of load.skippedKinds) {
    if (isGatewayAPIVersion(s.apiVersion)) continue;
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
