/**
 * GEP-713 targetRefs naming core Services, as the backend policies (BackendTrafficPolicy,
 * ScaleToZeroPolicy) attach to them: a Service in the policy's namespace, `sectionName` one port by name.
 * A policy naming the port is more specific than one naming the whole Service and applies there instead
 * (neither is Conflicted, as for BackendTLSPolicy); several on the very same target: the first to claim
 * it (callers go oldest first) wins and the others are Conflicted there. An invalid policy claims nothing.
 */
import type { Backend, SourceRef } from "../../../model/index.ts";
import type { PolicyTargetRef } from "../../../sources/schema/auth-policy.ts";
import type { Service } from "../../../sources/schema/core.ts";
import { arrayOf } from "../../common/objects.ts";
import type { AncestorResult } from "../policy-attachment.ts";

/** A targetRef with its fields checked, `sectionName` absent rather than empty. */
export type TargetRef = PolicyTargetRef;

/** A policy as Service attachment sees it: invalid ones report on their targets but claim none. */
export interface ServiceClaimant {
  readonly ref: SourceRef;
  readonly valid: boolean;
}

/** The policy deciding on each Service target (`<ns>/<service>` or `<ns>/<service>#<port name>`). */
export type ServiceWinners<C extends ServiceClaimant> = Map<string, C>;

/** The well-formed targetRefs, each once (group, kind, name and section), in their order. */
export function targetRefsOf(refs: readonly PolicyTargetRef[] | undefined): TargetRef[] {
  const out: TargetRef[] = [];
  const seen = new Set<string>();
  for (const t of arrayOf(refs)) {
    if (typeof t?.name !== "string" || typeof t.kind !== "string" || typeof t.group !== "string") continue;
    const section = typeof t.sectionName === "string" && t.sectionName !== "" ? t.sectionName : undefined;
    const key = `${t.group}/${t.kind}/${t.name}#${section ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      group: t.group,
      kind: t.kind,
      name: t.name,
      ...(section !== undefined ? { sectionName: section } : {}),
    });
  }
  return out;
}

/** The status ancestor of a target in the policy's namespace. */
export function ancestorRefOf(t: TargetRef, namespace: string): Readonly<Record<string, string>> {
  return {
    group: t.group,
    kind: t.kind,
    namespace,
    name: t.name,
    ...(t.sectionName !== undefined ? { sectionName: t.sectionName } : {}),
  };
}

export const isServiceRef = (t: TargetRef): boolean => t.group === "" && t.kind === "Service";

/** The outcome of one Service targetRef of `c`; a valid `c` claims the target when it is first there. */
export function attachServiceTarget<C extends ServiceClaimant>(
  c: C,
  t: TargetRef,
  services: ReadonlyMap<string, Service>,
  winners: ServiceWinners<C>,
): AncestorResult {
  const ns = c.ref.namespace;
  const ancestorRef = ancestorRefOf(t, ns);
  const svc = services.get(`${ns}/${t.name}`);
  if (svc === undefined)
    return { ancestorRef, outcome: "TargetNotFound", message: `Service ${ns}/${t.name} not found` };
  const section = t.sectionName;
  if (section !== undefined && !arrayOf(svc.spec?.ports).some((p) => p?.name === section))
    return {
      ancestorRef,
      outcome: "TargetNotFound",
      message: `Service ${ns}/${t.name} has no port named "${section}"`,
    };
  const key = `${ns}/${t.name}${section === undefined ? "" : `#${section}`}`;
  // An invalid policy claims nothing: it is reported where it would have applied.
  const winner = c.valid ? winners.get(key) : undefined;
  if (winner === undefined) {
    if (c.valid) winners.set(key, c);
    return { ancestorRef, outcome: "Accepted", message: "the policy applies to this target" };
  }
  const message = `${winner.ref.kind} ${winner.ref.namespace}/${winner.ref.name} targets the same object and is older (or first by namespace/name when ages tie); it applies instead`;
  return { ancestorRef, outcome: "Conflicted", message };
}

/** The policy deciding for a backend: the one on its Service port by name, else the one on its Service. */
export function serviceWinnerFor<C extends ServiceClaimant>(
  winners: ServiceWinners<C>,
  services: ReadonlyMap<string, Service>,
  b: Backend,
): C | undefined {
  if (winners.size === 0) return undefined;
  const key = `${b.service.namespace}/${b.service.name}`;
  const portName = arrayOf(services.get(key)?.spec?.ports).find((p) => p?.port === b.service.port)?.name;
  return (portName ? winners.get(`${key}#${portName}`) : undefined) ?? winners.get(key);
}
