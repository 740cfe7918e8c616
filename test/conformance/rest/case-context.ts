/**
 * What every rest case kind is given, and the small pieces they share: the certificates a case names by
 * ref, the deployment a pod name belongs to, and how long an attempt may still take.
 */
import type { Certificate } from "./certificates.ts";

export interface RestCaseContext {
  /** The Gateway's address (from its status). */
  readonly address: string;
  readonly certs: ReadonlyMap<string, Certificate>;
  /** How long a case may take to converge (upstream: 30 s, 60 s for UDP). */
  readonly deadlineMs: number;
  /** Pause between failed attempts (upstream: 1 s). */
  readonly retryMs: number;
}

/** The PEMs of the Secret or ConfigMap `ref`; throws when the run made no such certificate. */
export function certificate(ctx: RestCaseContext, ref: string): Certificate {
  const c = ctx.certs.get(ref);
  if (!c) throw new Error(`no certificate ${ref} was made`);
  return c;
}

/** upstream's backend name of a pod: its name without the last two `-`-separated parts. */
export function deploymentOf(pod: string): string {
  return pod.split("-").slice(0, -2).join("-");
}

/** Milliseconds left before `end`, capped at `cap` (a per-attempt deadline), at least 1. */
export function remaining(end: number, cap: number): number {
  return Math.max(1, Math.min(cap, Math.round(end - performance.now())));
}

/** Fields of `expected` (or another part of a case) that the harness does not know: each fails the case. */
export function unknownFields(part: object | undefined, known: readonly string[], what: string): string {
  const unknown = Object.keys(part ?? {}).filter((k) => !known.includes(k));
  return unknown.length ? `unknown ${what} field(s) ${unknown.join(", ")}: not checked, so not passed` : "";
}
