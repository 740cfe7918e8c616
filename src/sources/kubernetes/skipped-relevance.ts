/**
 * Which objects of the kinds Gatehouse does not serve are ours to report. A cluster may run another
 * Gateway API implementation that serves its XBackendTrafficPolicies (and other kinds): reporting
 * those as "not served" would be false and would flood the log and `/debug/problems`. So only an object
 * that asks something of Gatehouse is reported:
 * - a route or ListenerSet whose parentRefs (or ListenerSet parentRef) name one of our Gateways (a
 *   Gateway whose GatewayClass names our controller);
 * - an XBackendTrafficPolicy that targets a Service one of our Gateways' HTTPRoutes, GRPCRoutes or
 *   TLSRoutes sends to, since Gatehouse then ignores what it asks (retry budgets, session persistence).
 */
import type { RawObject } from "./informer.ts";

const GATEWAY_GROUP = "gateway.networking.k8s.io";

type Ref = { group?: unknown; kind?: unknown; namespace?: unknown; name?: unknown };

const refs = (v: unknown): Ref[] =>
  Array.isArray(v) ? v.filter((r): r is Ref => typeof r === "object" && r !== null) : [];

const nsOf = (o: RawObject): string => o.metadata?.namespace ?? "";

const spec = (o: RawObject): Record<string, unknown> =>
  typeof o.spec === "object" && o.spec !== null ? (o.spec as Record<string, unknown>) : {};

/** `ns/name` of every Gateway whose class names `controller`. */
export function ourGateways(
  classes: readonly RawObject[],
  gateways: readonly RawObject[],
  controller: string,
): Set<string> {
  const ours = new Set(
    classes.filter((c) => spec(c).controllerName === controller).map((c) => c.metadata?.name ?? ""),
  );
  return new Set(
    gateways
      .filter((g) => ours.has(String(spec(g).gatewayClassName ?? "")))
      .map((g) => `${nsOf(g)}/${g.metadata?.name ?? ""}`),
  );
}

/** Whether a parent reference names one of `gateways` (group and kind default to Gateway's). */
function namesGateway(ref: Ref, from: string, gateways: ReadonlySet<string>): boolean {
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? "Gateway") !== "Gateway") return false;
  return gateways.has(`${typeof ref.namespace === "string" ? ref.namespace : from}/${String(ref.name)}`);
}

/** Whether a route or ListenerSet names one of our Gateways as its parent. */
export function attachesToOurs(o: RawObject, gateways: ReadonlySet<string>): boolean {
  const s = spec(o);
  const parents = [...refs(s.parentRefs), ...refs(s.parentRef === undefined ? [] : [s.parentRef])];
  return parents.some((r) => namesGateway(r, nsOf(o), gateways));
}

/** `ns/name` of every Service a route attached to one of our Gateways sends to. */
export function servicesOfOurRoutes(
  routes: readonly RawObject[],
  gateways: ReadonlySet<string>,
): Set<string> {
  const out = new Set<string>();
  for (const r of routes) {
    if (!attachesToOurs(r, gateways)) continue;
    for (const rule of refs(spec(r).rules))
      for (const b of refs((rule as { backendRefs?: unknown }).backendRefs))
        if ((b.group ?? "") === "" && (b.kind ?? "Service") === "Service")
          out.add(`${typeof b.namespace === "string" ? b.namespace : nsOf(r)}/${String(b.name)}`);
  }
  return out;
}

/** Whether a policy on Services (XBackendTrafficPolicy) targets one of `services` (targetRefs are local: same namespace). */
export function targetsOurServices(o: RawObject, services: ReadonlySet<string>): boolean {
  return refs(spec(o).targetRefs).some(
    (t) => (t.group ?? "") === "" && t.kind === "Service" && services.has(`${nsOf(o)}/${String(t.name)}`),
  );
}
