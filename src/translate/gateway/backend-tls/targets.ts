/**
 * Which BackendTLSPolicy applies to a Service port, and which lose a conflict (Gateway API v1.6.1
 * BackendTLSPolicySpec.targetRefs). A targetRef names a core Service in the policy's namespace, and with
 * `sectionName` one of its ports by name. Policies conflict only when they name the same Service and the
 * same sectionName (or both none): the oldest by creationTimestamp wins, then the first by namespace/name,
 * and the others are Accepted False `Conflicted`. A policy naming the port by `sectionName` is more
 * specific than one naming the whole Service: on that port it applies and the whole-Service one does not,
 * and neither is Conflicted (the conformance test BackendTLSPolicyConflictResolution wants both Accepted).
 */
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import { arrayOf, creationMillis, nameOf, namespaceOf } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { compareSourceAge } from "../../common/sort.ts";

/** The policies on one Service port: the one that applies, and the ones that lost to it there. */
export interface PortPolicies {
  /** The policy that applies to the port; undefined: none (the port is spoken to in cleartext). */
  readonly winner?: BackendTLSPolicy;
  /** Policies on the same target (Service and sectionName) as the winner that lost to it. */
  readonly conflicted: readonly BackendTLSPolicy[];
  /** Whole-Service policies a sectionName policy overrides on this port (not Conflicted; they apply elsewhere). */
  readonly overridden: readonly BackendTLSPolicy[];
  /** Whether the winner names the port by `sectionName`. */
  readonly bySection: boolean;
}

const none: PortPolicies = { conflicted: [], overridden: [], bySection: false };

/** Whether a targetRef of `p` names Service `name` (in `p`'s namespace) and this port (by name, or none). */
function names(p: BackendTLSPolicy, name: string, section: string | undefined): boolean {
  return arrayOf(p.spec?.targetRefs).some(
    (t) =>
      (t?.group ?? "") === "" &&
      t.kind === "Service" &&
      t.name === name &&
      ((t.sectionName ?? "") === "" ? section === undefined : t.sectionName === section),
  );
}

/** Oldest first, then namespace/name: the first of a list applies. */
export function comparePolicies(a: BackendTLSPolicy, b: BackendTLSPolicy): number {
  const order = (p: BackendTLSPolicy) => ({
    namespace: namespaceOf(p),
    name: nameOf(p),
    createdMs: creationMillis(p),
  });
  return compareSourceAge(order(a), order(b));
}

/** The policies on Service `<namespace>/<service>`'s port named `portName` ("" or undefined: unnamed). */
export function policiesForPort(
  index: Pick<SnapshotIndex, "backendTLSPolicies">,
  namespace: string,
  service: string,
  portName: string | undefined,
): PortPolicies {
  const all = index.backendTLSPolicies?.get(`${namespace}/${service}`);
  if (all === undefined || all.length === 0) return none;
  const bySection = portName ? all.filter((p) => names(p, service, portName)).sort(comparePolicies) : [];
  const whole = all.filter((p) => names(p, service, undefined)).sort(comparePolicies);
  if (bySection.length > 0)
    return { winner: bySection[0], conflicted: bySection.slice(1), overridden: whole, bySection: true };
  if (whole.length > 0)
    return { winner: whole[0], conflicted: whole.slice(1), overridden: [], bySection: false };
  return none;
}
