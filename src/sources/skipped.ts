/**
 * Objects of kinds Gatehouse does not read, as both sources report them (never silently): a warning
 * problem each (`SkippedKind`, at `/debug/problems` and in `gatehouse translate`), and a log line the
 * first time each is seen. Gateway API kinds get the louder wording: an XBackendTrafficPolicy
 * is something a user expects a Gateway API implementation to serve.
 */
import type { Problem } from "../model/index.ts";

/** One skipped object; `namespace` is "" when the object names none (or is cluster-scoped). */
export interface SkippedObjectRef {
  readonly kind: string;
  readonly apiVersion?: string;
  readonly namespace: string;
  readonly name: string;
}

const gatewayAPIGroups: ReadonlySet<string> = new Set([
  "gateway.networking.k8s.io",
  "gateway.networking.x-k8s.io",
]);

/** Whether `apiVersion` is of a Gateway API group (standard or experimental `x-k8s.io`). */
export function isGatewayAPIVersion(apiVersion: unknown): boolean {
  return typeof apiVersion === "string" && gatewayAPIGroups.has(apiVersion.split("/")[0] ?? "");
}

/** How the problem and the log line word a skipped object. */
export function skippedMessage(o: SkippedObjectRef): string {
  return isGatewayAPIVersion(o.apiVersion)
    ? `${o.kind} is a Gateway API kind Gatehouse does not support: it is not served and gets no status`
    : `kind "${o.kind}" is not read by Gatehouse; skipped`;
}

/** The `SkippedKind` warning for one object. */
export function skippedProblem(o: SkippedObjectRef): Problem {
  return {
    object: { kind: o.kind, namespace: o.namespace, name: o.name },
    reason: "SkippedKind",
    message: skippedMessage(o),
    severity: "warning",
  };
}

/**
 * Which keys are new since the last call: each key is answered once while it stays present; a key
 * that disappears and comes back is new again.
 */
export class FirstSeen {
  #seen = new Set<string>();

  fresh(keys: Iterable<string>): string[] {
    const now = new Set(keys);
    const out = [...now].filter((k) => !this.#seen.has(k));
    this.#seen = now;
    return out;
  }
}

/** The key `FirstSeen` tracks an object by. */
export const skippedKey = (o: SkippedObjectRef): string => `${o.kind}/${o.namespace}/${o.name}`;
