import type { RouteMatch } from "../../model/index.ts";
import { compareSourceAge, compareStrings, type SourceOrder } from "../common/sort.ts";
import type { GRPCMethodOrder } from "./grpcroute/method-match.ts";

/** What decides an HTTPRoute match's place among all routes of one virtual host. */
export interface GatewayRouteOrder {
  readonly match: RouteMatch;
  readonly source: SourceOrder;
  readonly ruleIndex: number;
  readonly matchIndex: number;
  /** Set for a GRPCRoute's match (grpcroute/method-match.ts). */
  readonly grpc?: GRPCMethodOrder;
}

const pathRank = { Exact: 0, Prefix: 1, RegularExpression: 2 } as const;

/**
 * Gateway API match precedence (HTTPRouteRule.matches), across every route attached to a listener:
 * 1. Exact path, then PathPrefix by length (longest first), then RegularExpression (the spec leaves its
 *    place to implementations; after prefixes, longest pattern first);
 * 2. a method match before none;
 * 3. more header matches first, then more query param matches;
 * 4. oldest route (creationTimestamp; routes without one after those with one), then namespace/name;
 * 5. rule order, then match order within the route.
 */
export function compareGatewayRoutes(a: GatewayRouteOrder, b: GatewayRouteOrder): number {
  if (a.grpc !== undefined && b.grpc !== undefined) return compareGRPCRoutes(a, b, a.grpc, b.grpc);
  const pa = a.match.path;
  const pb = b.match.path;
  return (
    pathRank[pa.type] - pathRank[pb.type] ||
    pb.value.length - pa.value.length ||
    Number(b.match.method !== undefined) - Number(a.match.method !== undefined) ||
    b.match.headers.length - a.match.headers.length ||
    b.match.queryParams.length - a.match.queryParams.length ||
    compareSourceAge(a.source, b.source) ||
    a.ruleIndex - b.ruleIndex ||
    a.matchIndex - b.matchIndex ||
    compareStrings(pa.value, pb.value)
  );
}

/**
 * GRPCRouteRule.matches precedence, between the matches of GRPCRoutes (an HTTPRoute never shares a
 * virtual host with one: route-kind-conflicts.ts): more characters in the service, then in the method,
 * then more header matches; then oldest route, namespace/name, rule and match order, as above.
 */
function compareGRPCRoutes(
  a: GatewayRouteOrder,
  b: GatewayRouteOrder,
  ga: GRPCMethodOrder,
  gb: GRPCMethodOrder,
): number {
  return (
    gb.service - ga.service ||
    gb.method - ga.method ||
    b.match.headers.length - a.match.headers.length ||
    compareSourceAge(a.source, b.source) ||
    a.ruleIndex - b.ruleIndex ||
    a.matchIndex - b.matchIndex ||
    compareStrings(a.match.path.value, b.match.path.value)
  );
}
