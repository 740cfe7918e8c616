import type { SourceRef } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";

/** The metadata fields translation reads; everything is optional because input is never trusted. */
export interface ObjectLike {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly creationTimestamp?: string | Date;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly labels?: Readonly<Record<string, string>>;
  };
}

/** Namespace of a namespaced object; absent means `default`, as `kubectl apply` would decide. */
export function namespaceOf(obj: ObjectLike): string {
  const ns = obj.metadata?.namespace;
  return typeof ns === "string" && ns !== "" ? ns : "default";
}

export function nameOf(obj: ObjectLike): string {
  const name = obj.metadata?.name;
  return typeof name === "string" ? name : "";
}

/** A namespaced object's reference, for routes and problems. */
export function sourceRef(kind: string, obj: ObjectLike): SourceRef {
  return { kind, namespace: namespaceOf(obj), name: nameOf(obj) };
}

/**
 * creationTimestamp in milliseconds, or undefined when absent or unparsable (folder mode has none).
 * Parsing a given timestamp is not reading the clock, so translation stays pure.
 */
export function creationMillis(obj: ObjectLike): number | undefined {
  const ts = obj.metadata?.creationTimestamp;
  const ms = ts instanceof Date ? ts.getTime() : typeof ts === "string" ? Date.parse(ts) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

export function annotationOf(obj: ObjectLike, key: string): string | undefined {
  const value = obj.metadata?.annotations?.[key];
  return typeof value === "string" ? value : undefined;
}

/** The array itself, or [] for anything that is not one (translation never trusts its input's shape). */
export function arrayOf<T>(value: readonly T[] | null | undefined): readonly T[] {
  return Array.isArray(value) ? value : [];
}

/** A Secret's entry `key` as text: `stringData` (folder mode) first, else the base64 `data` decoded. */
export function secretText(secret: Secret, key: string): string | undefined {
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  const b64 = secret.data?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, "base64").toString("utf8");
}

/**
 * The one empty list translations share for "no header matches", "no filters" and the like: kept
 * translations (the memos) live as long as their objects, and at 10k routes a list each was tens of
 * thousands of arrays. Frozen, as nothing downstream may change a translation.
 */
export const emptyList: readonly never[] = Object.freeze([]);
