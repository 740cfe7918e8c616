import type { Backend, Filter, RouteAction, WeightedBackend } from "../../../model/index.ts";
import type { HTTPRouteFilter, HTTPRouteMatch, HTTPRouteRule } from "../../../sources/schema/gateway.ts";
import type { GRPCRouteRule } from "../../../sources/schema/grpcroute.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { h2cBackendId } from "../../common/names.ts";
import { arrayOf } from "../../common/objects.ts";
import type { RuleInvalid } from "../httproute/filters.ts";
import { type RuleContext, type RuleEntry, type TranslatedRule, translateRule } from "../httproute/rule.ts";
import { type GRPCMethodOrder, grpcMatchAsHTTP } from "./method-match.ts";

/** The filter types of GRPCRoute v1.6.1 (GRPCRouteFilterType); HTTPRoute's others are refused. */
const grpcFilterTypes = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "ExtensionRef",
]);

/** Per-rule limits of GRPCRoute v1.6.1 (CRD MaxItems), where they differ from HTTPRoute's. */
const grpcRuleLimits = { matches: 64, headers: 16 } as const;

/**
 * One GRPCRoute rule as route entries: its matches become path and header matches (method-match.ts)
 * and the rule, so rewritten, goes through HTTPRoute's rule translation (filters, weights, backends,
 * names), so both kinds make the same routes. What differs for gRPC:
 * - the filter types GRPCRoute has (others make the rule invalid, as an unknown type would);
 * - an invalid backend answers 503 where HTTPRoute's answers 500: GRPCRoute asks for UNAVAILABLE, which
 *   the proxy sends a gRPC client for 503 (proxy/request/grpc/status.ts);
 * - every backend is spoken to with h2c (gRPC has no HTTP/1.1 form): a Service port without appProtocol
 *   `kubernetes.io/h2c` becomes an h2c backend of its own (`…/h2c`).
 */
export function translateGRPCRule(
  rule: GRPCRouteRule,
  i: number,
  routeName: string,
  ctx: RuleContext,
): TranslatedRule | RuleInvalid {
  const field = `spec.rules[${i}]`;
  const bad = (message: string): RuleInvalid => ({
    reason: RouteReason.UnsupportedValue,
    message: `${field}.${message}`,
  });
  const matches = arrayOf(rule.matches);
  if (matches.length > grpcRuleLimits.matches)
    return bad(`matches: at most ${grpcRuleLimits.matches} allowed`);
  const httpMatches: HTTPRouteMatch[] = [];
  const orders: GRPCMethodOrder[] = [];
  for (const [j, m] of matches.entries()) {
    if (arrayOf(m.headers).length > grpcRuleLimits.headers)
      return bad(`matches[${j}].headers: at most ${grpcRuleLimits.headers} allowed`);
    const converted = grpcMatchAsHTTP(m);
    if (typeof converted === "string") return bad(`matches[${j}].${converted}`);
    httpMatches.push(converted.match);
    orders.push(converted.order);
  }
  const typeProblem = (list: readonly HTTPRouteFilter[] | undefined, where: string) => {
    const k = arrayOf(list).findIndex((f) => !grpcFilterTypes.has(f.type));
    const f = arrayOf(list)[k];
    return f ? bad(`${where}[${k}]: filter type "${f.type}" is not a GRPCRoute filter`) : undefined;
  };
  const filterProblem =
    typeProblem(rule.filters, "filters") ??
    arrayOf(rule.backendRefs)
      .map((b, k) => typeProblem(b.filters, `backendRefs[${k}].filters`))
      .find((p) => p !== undefined);
  if (filterProblem) return filterProblem;
  const asHTTP: HTTPRouteRule = {
    ...(rule.name !== undefined ? { name: rule.name } : {}),
    ...(httpMatches.length > 0 ? { matches: httpMatches } : {}),
    ...(rule.filters !== undefined ? { filters: rule.filters } : {}),
    ...(rule.backendRefs !== undefined ? { backendRefs: rule.backendRefs } : {}),
  };
  const t = translateRule(asHTTP, i, routeName, { ...ctx, routeKind: "GRPCRoute" });
  if ("reason" in t) return t;
  const h2c = new Map<string, Backend>();
  const backends = t.backends.map((b) => {
    if (b.protocol === "h2c") return b;
    const id = h2cBackendId(b.id);
    const own = h2c.get(b.id) ?? { ...b, id, protocol: "h2c" as const };
    h2c.set(b.id, own);
    return own;
  });
  const backendId = (id: string) => h2c.get(id)?.id ?? id;
  const mirrorTo = (f: Filter): Filter =>
    f.kind === "RequestMirror" && f.backendId !== undefined ? { ...f, backendId: backendId(f.backendId) } : f;
  const entries = t.entries.map(
    (e): RuleEntry => ({
      ...e,
      filters: e.filters.map(mirrorTo),
      action: grpcAction(e.action, backendId, mirrorTo),
      grpc: orders[e.matchIndex] ?? { service: 0, method: 0 },
    }),
  );
  return { entries, issues: t.issues, backends };
}

function grpcAction(
  a: RouteAction,
  backendId: (id: string) => string,
  mirrorTo: (f: Filter) => Filter,
): RouteAction {
  if (a.kind === "DirectResponse" && a.status === 500) return { ...a, status: 503 };
  if (a.kind !== "Forward") return a;
  const backends = a.backends.map(
    (b): WeightedBackend => ({
      ...b,
      backendId: b.failStatus === undefined ? backendId(b.backendId) : b.backendId,
      ...(b.failStatus === 500 ? { failStatus: 503 } : {}),
      filters: b.filters.map(mirrorTo),
    }),
  );
  return { ...a, backends };
}
