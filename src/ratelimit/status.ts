/**
 * The runtime half of a rate limit policy's status. Translation (pure) sets `Accepted`; whether Redis
 * answers is known only to the running gateway, so the status writer adds this condition to each
 * ancestor entry of the policies `RateLimitEnforcer.degradedPolicies()` names (and `False` otherwise).
 */
import { condition } from "../status/conditions.ts";
import type { Condition } from "../status/types.ts";

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
