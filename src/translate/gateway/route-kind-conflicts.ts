import { RouteReason } from "../../status/reasons.ts";
import { compareSourceAge, type SourceOrder } from "../common/sort.ts";
import { intersectHostnames } from "./gateway-hostnames.ts";
import type { AttachedKind } from "./listeners.ts";
import type { Attachment, ParentResult } from "./route-attachment.ts";

/** An HTTPRoute or GRPCRoute with what attachment made of its parentRefs. */
export interface AttachedHTTPRoute {
  readonly kind: Extract<AttachedKind, "HTTPRoute" | "GRPCRoute">;
  readonly ref: { readonly namespace: string; readonly name: string };
  readonly order: SourceOrder;
  readonly parents: readonly ParentResult[];
}

/** Whether two attachments' virtual host names share a request hostname. */
function overlap(a: Attachment, b: Attachment): boolean {
  return a.hosts.some((x) => b.hosts.some((y) => intersectHostnames(x, y) !== undefined));
}

/**
 * GRPCRoute `spec.hostnames` (v1.6.1): when an HTTPRoute and a GRPCRoute attach to one listener with
 * intersecting hostnames, exactly one of them is accepted there: the oldest (creationTimestamp), then the
 * first by namespace/name. The other loses that listener; a parentRef left with no listener is not
 * accepted (NotAllowedByListeners, naming the route that won). Routes of one kind never conflict here:
 * their matches are merged by precedence as usual. Returns the parents of each route, in input order.
 */
export function refuseKindConflicts(routes: readonly AttachedHTTPRoute[]): ParentResult[][] {
  const byAge = routes
    .map((route, i) => ({ route, i }))
    .sort((a, b) => compareSourceAge(a.route.order, b.route.order));
  /** Per listener (`<parent>/<listener>`): the attachments kept so far, with their route. */
  const kept = new Map<string, { route: AttachedHTTPRoute; attachment: Attachment }[]>();
  const lost = new Map<number, Map<ParentResult, { attachment: Attachment; winner: AttachedHTTPRoute }[]>>();
  for (const { route, i } of byAge) {
    for (const parent of route.parents) {
      if (!parent.accepted.ok) continue;
      for (const attachment of parent.attachments) {
        const key = `${parent.gatewayKey}/${attachment.plan.name}`;
        const there = kept.get(key) ?? [];
        kept.set(key, there);
        const winner = there.find((k) => k.route.kind !== route.kind && overlap(k.attachment, attachment));
        if (winner === undefined) {
          there.push({ route, attachment });
          continue;
        }
        const mine = lost.get(i) ?? new Map();
        lost.set(i, mine);
        mine.set(parent, [...(mine.get(parent) ?? []), { attachment, winner: winner.route }]);
      }
    }
  }
  return routes.map((route, i) => {
    const mine = lost.get(i);
    if (mine === undefined) return [...route.parents];
    return route.parents.map((parent): ParentResult => {
      const gone = mine.get(parent);
      if (gone === undefined) return parent;
      const attachments = parent.attachments.filter((a) => !gone.some((g) => g.attachment === a));
      if (attachments.length > 0) return { ...parent, attachments };
      const first = gone[0] as (typeof gone)[0];
      const message = `listener "${first.attachment.plan.name}" serves the ${first.winner.kind} ${first.winner.ref.namespace}/${first.winner.ref.name} on the same hostnames, which is older (or first by name): an HTTPRoute and a GRPCRoute cannot share a hostname on one listener`;
      const { notServing: _n, ...rest } = parent;
      return {
        ...rest,
        accepted: { ok: false, reason: RouteReason.NotAllowedByListeners, message },
        attachments: [],
      };
    });
  });
}
