/**
 * Gateway API fields Gatehouse does not implement and that have no listener or rule to refuse: each is
 * reported, never accepted in silence. Where the spec names a condition it is used (`parametersRef`:
 * Accepted False `InvalidParameters`); the rest are warnings (a problem: logged, at /debug/problems,
 * counted in the problems metric), since the object itself is served as far as it goes.
 */
import type { Problem } from "../../model/index.ts";
import type { Gateway, GatewayClass, HTTPRoute } from "../../sources/schema/gateway.ts";
import type { GRPCRoute } from "../../sources/schema/grpcroute.ts";
import type { TCPRoute, UDPRoute } from "../../sources/schema/stream-routes.ts";
import type { TLSRoute } from "../../sources/schema/tlsroute.ts";
import { sourceRef } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import { infrastructureProblems } from "./infrastructure.ts";

/** A parametersRef as the status names it: `group/kind name` (core kinds without the group). */
function describeRef(ref: unknown): string {
  const r = (ref ?? {}) as { group?: unknown; kind?: unknown; name?: unknown; namespace?: unknown };
  const group = typeof r.group === "string" && r.group !== "" ? `${r.group}/` : "";
  const ns = typeof r.namespace === "string" && r.namespace !== "" ? `${r.namespace}/` : "";
  return `${group}${String(r.kind ?? "?")} ${ns}${String(r.name ?? "?")}`;
}

/**
 * Why a GatewayClass of ours is not accepted: it has a `parametersRef`, and Gatehouse reads no
 * parameters of any kind. The spec: a parametersRef that "refers to an unsupported kind" — every kind,
 * here — means the class "SHOULD be rejected with the "Accepted" status condition set to "False" and an
 * "InvalidParameters" reason". Undefined when it has none.
 */
export function classParametersRefusal(c: GatewayClass): string | undefined {
  const ref = c.spec?.parametersRef;
  if (ref === undefined || ref === null) return undefined;
  return `spec.parametersRef: ${describeRef(ref)}: Gatehouse reads no parameters of any kind, so they would be ignored`;
}

/**
 * Why a Gateway is not accepted for its parameters (Accepted False `InvalidParameters`): its class was
 * refused for them (`classRefusal`), or `spec.infrastructure.parametersRef` is set, which the spec
 * treats as the class's ("the Gateway SHOULD be rejected … InvalidParameters").
 */
export function gatewayParametersRefusal(gw: Gateway, classRefusal: string | undefined): string | undefined {
  if (classRefusal !== undefined)
    return `its GatewayClass ${gw.spec?.gatewayClassName} is not accepted (${classRefusal})`;
  const ref = gw.spec?.infrastructure?.parametersRef;
  if (ref === undefined || ref === null) return undefined;
  return `spec.infrastructure.parametersRef: ${describeRef(ref)}: Gatehouse reads no parameters of any kind, so they would be ignored`;
}

/**
 * Warnings for what a served Gateway or route asks and Gatehouse does not do:
 * - Gateway `spec.allowedListeners.namespaces.from` other than None, All, Same or Selector: it admits no
 *   ListenerSet (listener-sets.ts);
 * - Gateway `spec.defaultScope` and route `spec.useDefaultGateways` other than `None` (experimental,
 *   GEP-3793): Gatehouse has no default Gateways, so no route attaches that way. Routes are warned only
 *   when a Gateway of ours asks to be a default one (otherwise their default Gateways are not ours);
 * - Gateway `spec.infrastructure` labels and annotations not propagated (infrastructure.ts).
 */
export function unsupportedFieldWarnings(
  gateways: readonly Gateway[],
  routes: readonly ReadRoute[],
): Problem[] {
  const out: Problem[] = [];
  for (const gw of gateways) {
    out.push(...infrastructureProblems(gw));
    const from = gw.spec?.allowedListeners?.namespaces?.from;
    if (from !== undefined && !["None", "All", "Same", "Selector"].includes(from))
      out.push(
        problem(
          sourceRef("Gateway", gw),
          "UnsupportedValue",
          `spec.allowedListeners.namespaces.from "${from}" is not None, All, Same or Selector; no ListenerSet attaches to this Gateway`,
          "warning",
        ),
      );
    const scope = gw.spec?.defaultScope;
    if (scope !== undefined && scope !== "None")
      out.push(
        problem(
          sourceRef("Gateway", gw),
          "UnsupportedValue",
          `spec.defaultScope "${scope}": default Gateways are not supported; no route attaches to this Gateway without naming it`,
          "warning",
        ),
      );
  }
  // A route's useDefaultGateways is ours to answer only when a Gateway of ours would be a default one.
  const defaults = gateways.some((gw) => (gw.spec?.defaultScope ?? "None") !== "None");
  for (const r of defaults ? routes : []) {
    const use = (r.spec as { useDefaultGateways?: unknown } | undefined)?.useDefaultGateways;
    if (use !== undefined && use !== "None")
      out.push(
        problem(
          sourceRef(r.kind, r),
          "UnsupportedValue",
          `spec.useDefaultGateways "${String(use)}": default Gateways are not supported; the route attaches only through its parentRefs`,
          "warning",
        ),
      );
  }
  const ours = namesGatewayOf(gateways);
  for (const r of routes) {
    if (!ours(r)) continue;
    if (r.kind === "GRPCRoute") out.push(...grpcMirrorWarnings(r));
  }
  return out;
}

type ReadRoute = HTTPRoute | GRPCRoute | TLSRoute | TCPRoute | UDPRoute;

/** Whether a route names one of `gateways` as a parent (warnings about routes of other Gateways are noise). */
function namesGatewayOf(gateways: readonly Gateway[]): (r: ReadRoute) => boolean {
  const ours = new Set(gateways.map((g) => `${g.metadata.namespace ?? "default"}/${g.metadata.name}`));
  return (r) => {
    const ns = r.metadata.namespace ?? "default";
    const parents = (
      r.spec as { parentRefs?: { kind?: string; namespace?: string; name: string }[] } | undefined
    )?.parentRefs;
    return (parents ?? []).some(
      (p) => (p.kind ?? "Gateway") === "Gateway" && ours.has(`${p.namespace ?? ns}/${p.name}`),
    );
  };
}

/**
 * GRPCRoute RequestMirror filters: translated, but a call's body is streamed to its h2c backend and a
 * mirror copies only bodies read whole, so no call is ever mirrored (each counted as
 * `skipped_streamed_body`). Said here once per filter rather than only in a metric.
 */
function grpcMirrorWarnings(r: GRPCRoute): Problem[] {
  const out: Problem[] = [];
  const warn = (field: string) =>
    out.push(
      problem(
        sourceRef("GRPCRoute", r),
        "UnsupportedValue",
        `${field}: RequestMirror on a GRPCRoute sends no copies: calls are streamed to the backend, and only bodies read whole are mirrored (gatehouse_mirror_requests_total{outcome="skipped_streamed_body"})`,
        "warning",
      ),
    );
  for (const [i, rule] of (r.spec?.rules ?? []).entries()) {
    for (const [j, f] of (rule.filters ?? []).entries())
      if (f.type === "RequestMirror") warn(`spec.rules[${i}].filters[${j}]`);
    for (const [k, b] of (rule.backendRefs ?? []).entries())
      for (const [j, f] of (b.filters ?? []).entries())
        if (f.type === "RequestMirror") warn(`spec.rules[${i}].backendRefs[${k}].filters[${j}]`);
  }
  return out;
}
