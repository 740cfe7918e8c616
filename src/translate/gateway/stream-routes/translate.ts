import type { Backend, SNIBackend, SourceRef } from "../../../model/index.ts";
import type { ReferenceGrant } from "../../../sources/schema/gateway.ts";
import type { TCPRoute, UDPRoute } from "../../../sources/schema/stream-routes.ts";
import type { TLSRoute } from "../../../sources/schema/tlsroute.ts";
import { RouteReason } from "../../../status/reasons.ts";
import type { HostPattern } from "../../common/host-patterns.ts";
import { arrayOf, creationMillis, sourceRef } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import type { SourceOrder } from "../../common/sort.ts";
import { parseGatewayHostname } from "../gateway-hostnames.ts";
import { type RefIssue, resolveBackendRef } from "../httproute/backend-refs.ts";

/** TLSRoute and TCPRoute limits (v1alpha2 CRD MaxItems; v1 allows one rule, which the same check covers). */
export const streamRouteLimits = { hostnames: 16, parentRefs: 32, rules: 16, backendRefs: 16 } as const;

/** The route kinds that forward whole connections or flows: TLSRoute (by SNI), TCPRoute, UDPRoute. */
export type StreamRouteKind = "TLSRoute" | "TCPRoute" | "UDPRoute";

/**
 * One TLSRoute or TCPRoute on its own, before it meets Gateways. Shaped like HTTPRouteTranslation for
 * attachment.
 */
export interface StreamRouteTranslation {
  readonly kind: StreamRouteKind;
  readonly route: TLSRoute | TCPRoute | UDPRoute;
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  /** SNI hostnames; empty means every name the listener takes. */
  readonly hostnames: readonly HostPattern[];
  /** Weighted candidates of every rule (a TLSRoute rule has no matches, so rules only add backends). */
  readonly backends: readonly SNIBackend[];
  /** Model backends of the valid references. */
  readonly resolved: readonly Backend[];
  /** Set when the route cannot be accepted at all (Accepted False with this reason). */
  readonly invalid?: { readonly reason: string; readonly message: string };
  /** Never set for TLSRoutes (no rule can be dropped alone); present for the shared status code. */
  readonly dropped: readonly { readonly message: string }[];
  /** Unresolvable references (ResolvedRefs False; the first one gives the reason). */
  readonly refIssues: readonly RefIssue[];
}

/**
 * Translate one TLSRoute or TCPRoute independently of its parents (a TCPRoute has no hostnames). Too many hostnames, parentRefs, rules or
 * backendRefs, a bad hostname or a weight out of range make the route invalid (UnsupportedValue).
 * A backendRef that does not resolve (kind, ReferenceGrant, Service, port) stays a candidate marked
 * `refused`, so its share of connections is closed rather than moved to the others, as the Gateway API
 * asks; ResolvedRefs then says why.
 */
export function translateStreamRoute(
  route: TLSRoute | TCPRoute | UDPRoute,
  kind: StreamRouteKind,
  index: SnapshotIndex,
  grants: readonly ReferenceGrant[],
): StreamRouteTranslation {
  const ref = sourceRef(kind, route);
  const order: SourceOrder = { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(route) };
  const base = {
    kind,
    route,
    ref,
    order,
    hostnames: [],
    backends: [],
    resolved: [],
    dropped: [],
    refIssues: [],
  };
  const invalid = (message: string): StreamRouteTranslation => ({
    ...base,
    invalid: { reason: RouteReason.UnsupportedValue, message },
  });
  const spec: {
    hostnames?: readonly string[];
    parentRefs?: readonly unknown[];
    rules?: TLSRoute["spec"]["rules"];
  } = route.spec ?? {};
  const rules = arrayOf(spec.rules);
  if (arrayOf(spec.hostnames).length > streamRouteLimits.hostnames)
    return invalid(`spec.hostnames: at most ${streamRouteLimits.hostnames} allowed`);
  if (arrayOf(spec.parentRefs).length > streamRouteLimits.parentRefs)
    return invalid(`spec.parentRefs: at most ${streamRouteLimits.parentRefs} allowed`);
  if (rules.length > streamRouteLimits.rules)
    return invalid(`spec.rules: at most ${streamRouteLimits.rules} allowed`);
  const hostnames: HostPattern[] = [];
  for (const [i, h] of arrayOf(spec.hostnames).entries()) {
    const parsed = parseGatewayHostname(h);
    if (!parsed.ok) return invalid(`spec.hostnames[${i}] "${h}": ${parsed.message}`);
    if (!hostnames.some((x) => x.hostname === parsed.host.hostname)) hostnames.push(parsed.host);
  }
  const ctx = { index, grants, namespace: ref.namespace, routeKind: kind };
  const backends: SNIBackend[] = [];
  const resolved: Backend[] = [];
  const refIssues: RefIssue[] = [];
  for (const [i, rule] of rules.entries()) {
    const refs = arrayOf(rule?.backendRefs);
    if (refs.length > streamRouteLimits.backendRefs)
      return invalid(`spec.rules[${i}].backendRefs: at most ${streamRouteLimits.backendRefs} allowed`);
    for (const [k, backendRef] of refs.entries()) {
      const where = `spec.rules[${i}].backendRefs[${k}]`;
      const weight = backendRef.weight ?? 1;
      if (!Number.isInteger(weight) || weight < 0 || weight > 1_000_000)
        return invalid(`${where}.weight: ${weight} is not within 0–1000000`);
      const r = resolveBackendRef(backendRef, where, ctx);
      if (r.issue) refIssues.push(r.issue);
      if (r.backend) resolved.push(r.backend);
      backends.push(
        r.backend ? { backendId: r.backend.id, weight } : { backendId: r.id, weight, refused: true },
      );
    }
  }
  return { ...base, hostnames, backends, resolved, refIssues };
}
