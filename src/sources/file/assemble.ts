import { knownKinds } from "../schema/index.ts";
import { emptySnapshotFields, type ResourceSnapshot } from "../snapshot.ts";
import type { Entry, FileParse, SkippedDoc } from "./documents.ts";

/** Something in the folder that is not (or not fully) served. */
export interface SourceError {
  readonly file: string;
  /** 0-based document in the file; -1 = the whole file (unreadable, YAML syntax error) or a folder. */
  readonly docIndex: number;
  readonly kind?: string;
  /** `namespace/name`, or `name` for cluster-scoped kinds. */
  readonly name?: string;
  /** What is wrong, naming the field path, and what keeps serving instead. */
  readonly reason: string;
}

/** An object of a kind Gatehouse does not read (documents.ts `SkippedDoc`) and its file. */
export interface SkippedObject extends SkippedDoc {
  readonly file: string;
}

/** The result of one read of the folder. */
export interface FolderLoad {
  readonly snapshot: ResourceSnapshot;
  readonly errors: readonly SourceError[];
  /**
   * Served objects with fields Gatehouse does not read (`Entry.unknownFields`; Gateway API kinds only),
   * one each, `reason` listing the field paths. Served as they are: not load errors.
   */
  readonly unknownFields: readonly SourceError[];
  /** Objects of kinds Gatehouse does not read (Deployments, ServiceAccounts, …): left out, not an error. */
  readonly skippedKinds: readonly SkippedObject[];
}

/**
 * What each file contributed to the last load, by path. It is the fallback when that file is next found
 * broken: see `mergeFile`.
 */
export type FileMemory = ReadonlyMap<string, readonly Entry[]>;

/** How one file was found on this read. */
export type FileRead =
  | { readonly file: string; readonly parse: FileParse }
  | { readonly file: string; readonly unreadable: string };

/** One file's contribution to a load, before duplicates across files are resolved. */
export interface FileResult {
  readonly file: string;
  readonly entries: readonly Entry[];
  readonly errors: readonly SourceError[];
  readonly skipped: readonly SkippedObject[];
}

/**
 * The last-good rules, per file:
 * - The file cannot be read or has a YAML syntax error: everything it served last time keeps serving.
 * - The YAML parses: its valid objects are served. For each invalid document, the object with the same
 *   kind/namespace/name that this file served last time (if any) keeps serving in its place.
 * Either way the problem is reported. What the file serves now becomes its fallback for next time, so a
 * kept object survives any number of broken saves, and a file that was never good serves nothing.
 */
export function mergeFile(read: FileRead, previous: readonly Entry[] = []): FileResult {
  const { file } = read;
  const kept = previous.length
    ? "; the last good version of this file keeps serving"
    : "; nothing from this file is served";
  if ("unreadable" in read)
    return {
      file,
      entries: previous,
      errors: [{ file, docIndex: -1, reason: read.unreadable + kept }],
      skipped: [],
    };
  const { parse } = read;
  if (parse.syntaxError !== undefined)
    return {
      file,
      entries: previous,
      errors: [{ file, docIndex: -1, reason: parse.syntaxError + kept }],
      skipped: [],
    };
  const entries = [...parse.entries];
  const errors: SourceError[] = [];
  for (const p of parse.problems) {
    const fallback =
      p.key === undefined || entries.some((e) => e.key === p.key)
        ? undefined
        : previous.find((e) => e.key === p.key);
    if (fallback) entries.push({ ...fallback, docIndex: p.docIndex });
    const suffix = fallback ? "; its last good version keeps serving" : "";
    errors.push({ file, docIndex: p.docIndex, kind: p.kind, name: p.name, reason: p.reason + suffix });
  }
  entries.sort((a, b) => a.docIndex - b.docIndex); // stable: List items keep their order
  const skipped = parse.skipped.map((s) => ({ file, ...s }));
  return { file, entries, errors, skipped };
}

/**
 * Put the files' objects into one snapshot, in the given (path) order. The first object with a given
 * kind/namespace/name wins; later ones are reported as duplicates and left out.
 */
export function assemble(
  results: readonly FileResult[],
  extraErrors: readonly SourceError[] = [],
): { load: FolderLoad; memory: FileMemory } {
  const fields = emptySnapshotFields();
  const errors: SourceError[] = [...extraErrors];
  const unknownFields: SourceError[] = [];
  const first = new Map<string, { file: string; docIndex: number }>();
  const memory = new Map<string, readonly Entry[]>();
  for (const r of results) {
    memory.set(r.file, r.entries);
    errors.push(...r.errors);
    for (const e of r.entries) {
      const earlier = first.get(e.key);
      if (earlier) {
        const where = `${earlier.file} (document ${earlier.docIndex})`;
        errors.push({
          file: r.file,
          docIndex: e.docIndex,
          kind: e.kind,
          name: e.name,
          reason: `duplicate: ${e.kind} ${e.name} is already defined in ${where}; this one is ignored`,
        });
        continue;
      }
      first.set(e.key, { file: r.file, docIndex: e.docIndex });
      if (e.unknownFields !== undefined)
        unknownFields.push({
          file: r.file,
          docIndex: e.docIndex,
          kind: e.kind,
          name: e.name,
          reason: e.unknownFields,
        });
      fields[knownKinds[e.kind].field].push(e.object);
    }
  }
  const snapshot = fields as unknown as ResourceSnapshot;
  const skippedKinds = results.flatMap((r) => r.skipped);
  return { load: { snapshot, errors, unknownFields, skippedKinds }, memory };
}
