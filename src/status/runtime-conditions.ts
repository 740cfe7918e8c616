/**
 * Conditions only the running gateway can know (is Redis answering, did the JWKS load), added to the
 * statuses translation computed for a policy kind. Translation is pure and sets `Accepted`; these go on
 * every accepted ancestor entry of the policies `conditionFor` answers for, and nowhere else.
 */
import type { Condition, ObjectStatus } from "./types.ts";

/** One ancestor entry of a policy status, as translate/policy-status.ts writes it. */
interface AncestorStatus {
  readonly conditions?: readonly Condition[];
  readonly [field: string]: unknown;
}

export function withAncestorCondition(
  statuses: readonly ObjectStatus[],
  kind: string,
  conditionFor: (status: ObjectStatus) => Condition | undefined,
): ObjectStatus[] {
  return statuses.map((s) => {
    if (s.target.kind !== kind) return s;
    const ancestors = s.status.ancestors;
    if (!Array.isArray(ancestors)) return s;
    const extra = conditionFor(s);
    if (extra === undefined) return s;
    const next = (ancestors as AncestorStatus[]).map((a) => {
      const accepted = a.conditions?.some((c) => c.type === "Accepted" && c.status === "True");
      return accepted ? { ...a, conditions: [...(a.conditions ?? []), extra] } : a;
    });
    return { ...s, status: { ...s.status, ancestors: next } };
  });
}
