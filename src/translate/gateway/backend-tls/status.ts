/**
 * The `.status` of every BackendTLSPolicy (PolicyStatus, Gateway API v1.6.1): one PolicyAncestorStatus per
 * Gateway of ours whose routes reach a Service port the policy targets (apply.ts), with Accepted (True
 * `Accepted`; False `Invalid`, `NoValidCACertificate` or `Conflicted`) and ResolvedRefs (True
 * `ResolvedRefs`; False `InvalidCACertificateRef` or `InvalidKind`), stamped with the policy's generation.
 * A policy no route of ours reaches gets an empty list of ours (the writer keeps other controllers'
 * entries), so an ancestor that went away loses its entry. Problems say the same, and what it does to
 * traffic; targetRefs that name nothing are warnings, since no condition can carry them.
 */
import type { Problem } from "../../../model/index.ts";
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import { condition, generationOf } from "../../../status/conditions.ts";
import { ConditionType as C, gatewayGroup, BackendTLSPolicyReason as R } from "../../../status/reasons.ts";
import type { ObjectStatus } from "../../../status/types.ts";
import { arrayOf, nameOf, namespaceOf, sourceRef } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { compareStrings } from "../../common/sort.ts";
import type { PolicyUse } from "./apply.ts";

/** At most 16 ancestors, as the Gateway API bounds PolicyStatus.ancestors. */
const maxAncestors = 16;

/** Statuses (by namespace/name) and problems of every BackendTLSPolicy in `policies`. */
export function backendTLSPolicyStatuses(
  policies: readonly BackendTLSPolicy[],
  uses: ReadonlyMap<string, PolicyUse>,
  index: Pick<SnapshotIndex, "services">,
  controllerName: string,
): { statuses: ObjectStatus[]; problems: Problem[] } {
  const statuses: ObjectStatus[] = [];
  const problems: Problem[] = [];
  const sorted = [...policies].sort(
    (a, b) => compareStrings(namespaceOf(a), namespaceOf(b)) || compareStrings(nameOf(a), nameOf(b)),
  );
  for (const p of sorted) {
    const ref = sourceRef("BackendTLSPolicy", p);
    const gen = generationOf(p);
    const u = uses.get(`${ref.namespace}/${ref.name}`);
    const gateways = [...(u?.ancestors.keys() ?? [])].sort(compareStrings);
    const ancestors = gateways.slice(0, maxAncestors).map((gw) => {
      const [namespace = "", name = ""] = gw.split("/");
      const lost = u?.ancestors.get(gw);
      const accepted = u?.reading.accepted ?? { ok: true };
      const resolved = u?.reading.resolvedRefs ?? { ok: true };
      return {
        ancestorRef: { group: gatewayGroup, kind: "Gateway", namespace, name },
        controllerName,
        conditions: [
          !accepted.ok
            ? condition(C.Accepted, false, accepted.reason, accepted.message, gen)
            : lost !== undefined
              ? condition(C.Accepted, false, R.Conflicted, lost, gen)
              : condition(C.Accepted, true, R.Accepted, "policy accepted", gen),
          resolved.ok
            ? condition(C.ResolvedRefs, true, R.ResolvedRefs, "all references resolved", gen)
            : condition(C.ResolvedRefs, false, resolved.reason, resolved.message, gen),
        ],
      };
    });
    statuses.push({
      target: { group: gatewayGroup, kind: "BackendTLSPolicy", namespace: ref.namespace, name: ref.name },
      ...(gen !== undefined ? { generation: gen } : {}),
      status: { ancestors },
    });
    problems.push(...targetProblems(p, index));
    if (u === undefined || gateways.length === 0) continue;
    const { accepted, resolvedRefs } = u.reading;
    if (!accepted.ok)
      problems.push(
        problem(
          ref,
          accepted.reason,
          `${accepted.message}; the backends it applies to answer 503 (never cleartext)`,
        ),
      );
    else if (!resolvedRefs.ok) problems.push(problem(ref, resolvedRefs.reason, resolvedRefs.message));
    const lost = gateways.map((gw) => u.ancestors.get(gw)).find((m) => m !== undefined);
    if (lost !== undefined) problems.push(problem(ref, R.Conflicted, lost, "warning"));
  }
  return { statuses, problems };
}

/** Warnings for targetRefs that name nothing this policy can apply to. */
function targetProblems(p: BackendTLSPolicy, index: Pick<SnapshotIndex, "services">): Problem[] {
  const ref = sourceRef("BackendTLSPolicy", p);
  const out: Problem[] = [];
  for (const [i, t] of arrayOf(p.spec?.targetRefs).entries()) {
    const field = `spec.targetRefs[${i}]`;
    if ((t?.group ?? "") !== "" || t.kind !== "Service") {
      const what = `${t?.group ? `${t.group}/` : ""}${t?.kind ?? "(no kind)"}`;
      out.push(
        problem(
          ref,
          "UnsupportedTarget",
          `${field}: ${what} is not supported; only core Services are`,
          "warning",
        ),
      );
      continue;
    }
    const svc = index.services.get(`${ref.namespace}/${t.name}`);
    if (!svc)
      out.push(
        problem(ref, "TargetNotFound", `${field}: Service ${ref.namespace}/${t.name} not found`, "warning"),
      );
    else if (t.sectionName && !arrayOf(svc.spec?.ports).some((port) => port.name === t.sectionName))
      out.push(
        problem(
          ref,
          "TargetNotFound",
          `${field}: Service ${ref.namespace}/${t.name} has no port named "${t.sectionName}"`,
          "warning",
        ),
      );
  }
  return out;
}
