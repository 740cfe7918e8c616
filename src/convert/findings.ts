/**
 * What `gatehouse convert` could not carry over, or carried over with a difference: each finding becomes a
 * YAML comment beside the object it concerns, a line on stderr, and one count towards `--strict`.
 */
import type { SourceRef } from "../model/index.ts";
import { compareStrings } from "../translate/common/sort.ts";

export interface Finding {
  /** The Ingress (or other input object) whose behaviour is not fully kept. */
  readonly object: SourceRef;
  /** What is not kept, and what the output does instead. */
  readonly message: string;
  /**
   * `unconverted`: behaviour the output does not keep (counts for `--strict`); `problem`: a problem
   * translation itself reports about the input (counted as `translate --strict` counts it);
   * `note`: kept, but worth knowing (not counted).
   */
  readonly kind: "unconverted" | "problem" | "note";
}

/** Findings, each said once, in the order found. */
export class Findings {
  private readonly seen = new Set<string>();
  readonly list: Finding[] = [];

  add(object: SourceRef, message: string, kind: Finding["kind"] = "unconverted"): void {
    const key = `${object.kind}/${object.namespace}/${object.name}\n${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.list.push({ object, message, kind });
  }

  /** The findings about one object, in order. */
  about(object: SourceRef): Finding[] {
    return this.list.filter((f) => sameRef(f.object, object));
  }
}

export function sameRef(a: SourceRef, b: SourceRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

export function refText(r: SourceRef): string {
  return `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
}

export function compareRefs(a: SourceRef, b: SourceRef): number {
  return (
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.namespace, b.namespace) ||
    compareStrings(a.name, b.name)
  );
}

/** Whether `--strict` counts it. */
export function counts(f: Finding): boolean {
  return f.kind !== "note";
}
