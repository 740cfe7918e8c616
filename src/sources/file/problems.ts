/**
 * A folder load's errors as `Problem`s, so `gatehouse translate` and the golden tests print what could
 * not be loaded in the same YAML `problems` list as what could not be translated, instead of beside it.
 */
import type { Problem } from "../../model/index.ts";
import { skippedProblem } from "../skipped.ts";
import type { FolderLoad, SourceError } from "./assemble.ts";
import { clusterScopedKinds } from "./documents.ts";

/** A `Problem` found while loading, with where in the input it is. */
export interface LoadProblem extends Problem {
  /** The file (or folder), as given on the command line or as found in the folder. */
  readonly file: string;
  /** 0-based document in the file; absent when the whole file (or folder) could not be used. */
  readonly document?: number;
}

/**
 * One problem per load error, in load order, then one warning per served object with fields Gatehouse
 * does not read, then one warning per object of a kind Gatehouse does not read, naming it
 * (src/sources/skipped.ts). Reasons: `InvalidFile` (unreadable, YAML syntax error: nothing of the file
 * is used), `DuplicateObject` (a second object with the same kind/namespace/name), `InvalidObject`
 * (failed the schema), and for the warnings `UnknownField` (the object is served without those fields,
 * the message lists their paths) and `SkippedKind`.
 */
export function loadProblems(load: FolderLoad): LoadProblem[] {
  const errors = load.errors.map(fromSourceError);
  const unknown = load.unknownFields.map(
    (u): LoadProblem => ({
      object: objectRef(u.kind ?? "", u.name ?? ""),
      reason: "UnknownField",
      message: u.reason,
      severity: "warning",
      file: u.file,
      document: u.docIndex,
    }),
  );
  const skipped = load.skippedKinds.map(
    (s): LoadProblem => ({ ...skippedProblem(s), file: s.file, document: s.docIndex }),
  );
  return [...errors, ...unknown, ...skipped];
}

function fromSourceError(e: SourceError): LoadProblem {
  const whole = e.docIndex < 0;
  // assemble.ts words every duplicate this way; load problems need no other code than that.
  const reason = whole
    ? "InvalidFile"
    : e.reason.startsWith("duplicate: ")
      ? "DuplicateObject"
      : "InvalidObject";
  return {
    object: objectRef(e.kind ?? "", e.name ?? ""),
    reason,
    message: e.reason,
    severity: "error",
    file: e.file,
    ...(whole ? {} : { document: e.docIndex }),
  };
}

/** `SourceError.name` is `namespace/name`, or `name` for cluster-scoped kinds. */
function objectRef(kind: string, name: string): Problem["object"] {
  const slash = name.indexOf("/");
  if (clusterScopedKinds.has(kind) || slash < 0) return { kind, namespace: "", name };
  return { kind, namespace: name.slice(0, slash), name: name.slice(slash + 1) };
}
