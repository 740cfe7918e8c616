/**
 * What an entry of the annotation tables (annotations/nginx-annotations.ts) says, and the builders the
 * tables are written with.
 */

export type AnnotationSupport = "honoured" | "refused" | "not-yet" | "no-effect";

export interface AnnotationEntry {
  readonly support: AnnotationSupport;
  /** What Gatehouse does (honoured), or what differs from ingress-nginx (refused, not-yet). */
  readonly note: string;
  /** An access control: not enforced means the Ingress's paths answer 403 (audit.ts). */
  readonly guard?: true;
  /** Values that ask for nothing, lower-case. */
  readonly off?: readonly string[];
}

export const honoured = (note: string): AnnotationEntry => ({ support: "honoured", note });
export const refused = (note: string, guard?: true): AnnotationEntry => ({
  support: "refused",
  note,
  ...(guard ? { guard } : {}),
});
export const notYet = (note: string, off?: readonly string[]): AnnotationEntry => ({
  support: "not-yet",
  note,
  ...(off ? { off } : {}),
});
export const tuning = (note: string): AnnotationEntry => ({ support: "no-effect", note });
/** An access control Gatehouse enforces: still a guard, so a key spelled in the wrong case fails closed. */
export const honouredGuard = (note: string, off?: readonly string[]): AnnotationEntry => ({
  support: "honoured",
  note,
  guard: true,
  ...(off ? { off } : {}),
});
export const guard = (note: string, off?: readonly string[]): AnnotationEntry => ({
  support: "not-yet",
  note,
  guard: true,
  ...(off ? { off } : {}),
});
