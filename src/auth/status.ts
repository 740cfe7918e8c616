/**
 * The runtime half of an AuthPolicy's status: whether its signing keys could be loaded. A JWKS URL or
 * discovery document that cannot be fetched leaves the policy's routes failing closed (401); this
 * `Degraded` condition says so on the policy, beside the log line the fetcher writes.
 */
import { condition } from "../status/conditions.ts";
import { withAncestorCondition } from "../status/runtime-conditions.ts";
import type { ObjectStatus } from "../status/types.ts";

export const KeysDegradedCondition = "Degraded";

/**
 * `statuses` with `Degraded` on every accepted ancestor of the AuthPolicies in `remote` (policies that
 * fetch keys, by `namespace/name`): True with the reason when `unavailable` names the policy.
 */
export function withKeyHealth(
  statuses: readonly ObjectStatus[],
  remote: ReadonlySet<string>,
  unavailable: ReadonlyMap<string, string>,
): ObjectStatus[] {
  if (remote.size === 0) return [...statuses];
  return withAncestorCondition(statuses, "AuthPolicy", (s) => {
    const key = `${s.target.namespace}/${s.target.name}`;
    if (!remote.has(key)) return undefined;
    const why = unavailable.get(key);
    return why === undefined
      ? condition(KeysDegradedCondition, false, "KeysAvailable", "signing keys are loaded", s.generation)
      : condition(
          KeysDegradedCondition,
          true,
          "KeysUnavailable",
          `${why}; the policy's routes answer 401 until keys load`,
          s.generation,
        );
  });
}
