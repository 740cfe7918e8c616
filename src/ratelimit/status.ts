/**
 * The runtime half of a rate limit policy's status. Translation (pure) sets `Accepted`; whether Redis
 * answers is known only to the running gateway, so `RateLimitRuntime` (runtime.ts) adds this condition to
 * each accepted ancestor entry of every policy in force: `True` for the policies it finds degraded,
 * `False` otherwise, and publishes again whenever that set changes.
 */
import { condition } from "../status/conditions.ts";
import type { Condition, ObjectStatus } from "../status/types.ts";
import { rateLimitPolicyName } from "../translate/common/names.ts";

export const DegradedCondition = "Degraded";

export function degradedCondition(
  degraded: boolean,
  failureMode: "Open" | "Closed" | "Local",
  generation: number | undefined,
): Condition {
  if (!degraded)
    return condition(DegradedCondition, false, "StoreAvailable", "the rate limit store answers", generation);
  const effect = {
    Open: "requests are admitted without counting",
    Closed: "requests are answered 503",
    Local: "requests are counted in-process at the limit divided by the live replicas",
  }[failureMode];
  return condition(
    DegradedCondition,
    true,
    "StoreUnavailable",
    `the rate limit store (Redis) does not answer; failure mode ${failureMode}: ${effect}`,
    generation,
  );
}

/** One ancestor entry of a policy status, as policy-status.ts writes it. */
interface AncestorStatus {
  readonly conditions?: readonly Condition[];
  readonly [field: string]: unknown;
}

/**
 * `statuses` with a `Degraded` condition on every accepted ancestor of each RateLimitPolicy named in
 * `failureModes` (the valid policies routes carry, by `ratelimitpolicy/<ns>/<name>`). Other statuses, and
 * policies not there (invalid ones use no store; others attach nowhere), are returned as they are.
 */
export function withStoreHealth(
  statuses: readonly ObjectStatus[],
  failureModes: ReadonlyMap<string, "Open" | "Closed" | "Local">,
  degraded: ReadonlySet<string>,
): ObjectStatus[] {
  return statuses.map((s) => {
    if (s.target.kind !== "RateLimitPolicy") return s;
    const policy = rateLimitPolicyName(s.target.namespace, s.target.name);
    const mode = failureModes.get(policy);
    const ancestors = s.status.ancestors;
    if (mode === undefined || !Array.isArray(ancestors)) return s;
    const health = degradedCondition(degraded.has(policy), mode, s.generation);
    const next = (ancestors as AncestorStatus[]).map((a) => {
      const accepted = a.conditions?.some((c) => c.type === "Accepted" && c.status === "True");
      return accepted ? { ...a, conditions: [...(a.conditions ?? []), health] } : a;
    });
    return { ...s, status: { ...s.status, ancestors: next } };
  });
}
