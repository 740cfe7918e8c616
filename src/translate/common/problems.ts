import type { Problem, SourceRef } from "../../model/index.ts";
import type { UnreadableObject } from "../../sources/snapshot.ts";
import { arrayOf, type ObjectLike, sourceRef } from "./objects.ts";

export function problem(
  object: SourceRef,
  reason: string,
  message: string,
  severity: Problem["severity"] = "error",
): Problem {
  return { object, reason, message, severity };
}

/** An unexpected exception while translating one object: reported, and the other objects go on. */
export function internalProblem(object: SourceRef, err: unknown): Problem {
  const detail = err instanceof Error ? err.message : String(err);
  return problem(object, "InternalError", `translation failed for this object: ${detail}`);
}

/**
 * `build` for each object of `kind` that has metadata, in order. One that throws is an internalProblem in
 * `problems`, and the others go on (each policy kind's translator reads its objects this way).
 */
export function builtEach<O extends ObjectLike, T>(
  objects: readonly (O | null | undefined)[] | null | undefined,
  kind: string,
  build: (object: O, ref: SourceRef) => T,
  problems: Problem[],
): T[] {
  const out: T[] = [];
  for (const o of arrayOf(objects)) {
    if (!o?.metadata) continue;
    const ref = sourceRef(kind, o);
    try {
      out.push(build(o, ref));
    } catch (err) {
      problems.push(internalProblem(ref, err));
    }
  }
  return out;
}

/**
 * One problem per referenced Secret the source could not read (ResourceSnapshot `unreadable`): what uses
 * it reports it "not found", this says why. (An unreadable ConfigMap is reported by the Ingress that
 * names it, custom-headers.ts.)
 */
export function unreadableSecretProblems(unreadable: readonly UnreadableObject[] | undefined): Problem[] {
  return arrayOf(unreadable)
    .filter((u) => u?.kind === "Secret")
    .map((u) =>
      problem(
        { kind: "Secret", namespace: u.namespace, name: u.name },
        "UnreadableSecret",
        `referenced, but the gateway could not read it (${u.why}): what uses it reports it not found`,
      ),
    );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Problems grouped by object (namespace, name, kind), keeping the order they were found in within one
 * object (that order follows the object's fields), with exact duplicates removed.
 */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  const unique = problems.filter((p) => {
    const key = JSON.stringify([p.object.kind, p.object.namespace, p.object.name, p.reason, p.message]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique
    .map((p, i) => ({ p, i }))
    .sort(
      (a, b) =>
        compare(a.p.object.namespace, b.p.object.namespace) ||
        compare(a.p.object.name, b.p.object.name) ||
        compare(a.p.object.kind, b.p.object.kind) ||
        a.i - b.i,
    )
    .map(({ p }) => p);
}
