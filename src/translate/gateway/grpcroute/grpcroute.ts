import type { Backend } from "../../../model/index.ts";
import type { ReferenceGrant } from "../../../sources/schema/gateway.ts";
import type { GRPCRoute } from "../../../sources/schema/grpcroute.ts";
import { RouteReason } from "../../../status/reasons.ts";
import type { HostPattern } from "../../common/host-patterns.ts";
import { grpcRouteName } from "../../common/names.ts";
import { arrayOf, creationMillis, sourceRef } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import type { SourceOrder } from "../../common/sort.ts";
import { parseGatewayHostname } from "../gateway-hostnames.ts";
import type { RefIssue } from "../httproute/backend-refs.ts";
import type { RuleInvalid } from "../httproute/filters.ts";
import { type HTTPRouteTranslation, routeLimits } from "../httproute/httproute.ts";
import type { RuleEntry } from "../httproute/rule.ts";
import { ruleSession, withSession } from "../httproute/session-persistence.ts";
import { translateGRPCRule } from "./grpc-rule.ts";

/** One GRPCRoute on its own, before it meets Gateways: HTTPRouteTranslation's shape, so that attachment,
 * placement and status treat both kinds alike. */
export type GRPCRouteTranslation = Omit<HTTPRouteTranslation, "route"> & { readonly route: GRPCRoute };

/**
 * Translate one GRPCRoute independently of its parents, as translateHTTPRoute does an HTTPRoute: the
 * same route-wide limits (GRPCRoute's CRD has HTTPRoute's: 16 hostnames, 32 parentRefs, 16 rules, 128
 * matches in all), a bad rule dropped (PartiallyInvalid), every rule bad → not accepted.
 */
export function translateGRPCRoute(
  route: GRPCRoute,
  index: SnapshotIndex,
  grants: readonly ReferenceGrant[],
): GRPCRouteTranslation {
  const ref = sourceRef("GRPCRoute", route);
  const order: SourceOrder = { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(route) };
  const base = { route, ref, order, hostnames: [], entries: [], backends: [], dropped: [], refIssues: [] };
  const invalid = (message: string): GRPCRouteTranslation => ({
    ...base,
    invalid: { reason: RouteReason.UnsupportedValue, message },
  });
  const spec = route.spec ?? {};
  const rules = arrayOf(spec.rules);
  if (arrayOf(spec.hostnames).length > routeLimits.hostnames)
    return invalid(`spec.hostnames: at most ${routeLimits.hostnames} allowed`);
  if (arrayOf(spec.parentRefs).length > routeLimits.parentRefs)
    return invalid(`spec.parentRefs: at most ${routeLimits.parentRefs} allowed`);
  if (rules.length > routeLimits.rules) return invalid(`spec.rules: at most ${routeLimits.rules} allowed`);
  const totalMatches = rules.reduce((n, r) => n + Math.max(1, arrayOf(r.matches).length), 0);
  if (totalMatches > routeLimits.totalMatches)
    return invalid(`spec.rules: at most ${routeLimits.totalMatches} matches in all rules together`);
  const names = rules.map((r) => r.name).filter((n): n is string => typeof n === "string");
  if (new Set(names).size !== names.length)
    return invalid("spec.rules: rule names must be unique within the route");
  const hostnames: HostPattern[] = [];
  for (const [i, h] of arrayOf(spec.hostnames).entries()) {
    const parsed = parseGatewayHostname(h);
    if (!parsed.ok) return invalid(`spec.hostnames[${i}] "${h}": ${parsed.message}`);
    if (!hostnames.some((x) => x.hostname === parsed.host.hostname)) hostnames.push(parsed.host);
  }
  const ctx = { index, grants, namespace: ref.namespace, source: ref };
  const entries: RuleEntry[] = [];
  const backends: Backend[] = [];
  const dropped: RuleInvalid[] = [];
  const refIssues: RefIssue[] = [];
  const routeName = grpcRouteName(ref.namespace, ref.name);
  for (const [i, rule] of (rules.length > 0 ? rules : [{}]).entries()) {
    // Session persistence (experimental) as on HTTPRoute.
    const session = ruleSession({ sessionPersistence: rule.sessionPersistence }, i);
    if (session !== undefined && "reason" in session) {
      dropped.push(session);
      continue;
    }
    const t = translateGRPCRule(rule, i, routeName, ctx);
    if ("reason" in t) {
      dropped.push(t);
      continue;
    }
    entries.push(...(session === undefined ? t.entries : withSession(t.entries, session)));
    for (const b of t.backends) if (!backends.some((x) => x.id === b.id)) backends.push(b);
    refIssues.push(...t.issues);
  }
  if (entries.length === 0 && dropped.length > 0) {
    const first = dropped[0] as RuleInvalid;
    const all = dropped.map((d) => d.message).join("; ");
    return {
      ...base,
      hostnames,
      invalid: { reason: first.reason, message: `every rule is invalid: ${all}` },
    };
  }
  return { ...base, hostnames, entries, backends, dropped, refIssues };
}
