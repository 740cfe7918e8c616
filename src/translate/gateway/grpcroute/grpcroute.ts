import type { Backend } from "../../../model/index.ts";
import type { ReferenceGrant } from "../../../sources/schema/gateway.ts";
import type { GRPCRoute } from "../../../sources/schema/grpcroute.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { grpcRouteName } from "../../common/names.ts";
import { arrayOf, creationMillis, sourceRef } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import type { SourceOrder } from "../../common/sort.ts";
import type { RefIssue } from "../httproute/backend-refs.ts";
import type { RuleInvalid } from "../httproute/filters.ts";
import type { HTTPRouteTranslation } from "../httproute/httproute.ts";
import { checkRouteWide } from "../httproute/route-wide.ts";
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
  const wide = checkRouteWide(spec);
  if (!wide.ok) return invalid(wide.message);
  const hostnames = wide.hostnames;
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
