/**
 * BackendTrafficPolicies on HTTPRoutes, GRPCRoutes and Gateways (GEP-713 attachment,
 * policy-attachment.ts): a route of a targeted HTTPRoute or GRPCRoute (every rule, or the rule named by
 * `sectionName`), or any HTTP or gRPC route placed on a targeted Gateway (every listener, or the one
 * named), sends to its backends with the policy's settings. Per backend of such a route, field group by
 * field group, the most specific policy that sets the group decides: the backend's Service (port) > route
 * rule > route > Gateway listener > Gateway. When a route level decides any group, the route is pointed
 * at a variant of the backend (names.ts trafficPolicyBackendId) carrying those settings; routes reached
 * through the same policies share one variant, and what the Service's own policy decides (health
 * checking, the breaker) stays one state with the Service port's backend (`Backend.stateOf`). A policy
 * that loses a group somewhere is told so (an `Overridden` warning), never silently.
 */
import type {
  Backend,
  GatewayModel,
  Listener,
  Problem,
  Route,
  WeightedBackend,
} from "../../../model/index.ts";
import { trafficPolicyBackendId } from "../../common/names.ts";
import { problem } from "../../common/problems.ts";
import { compareStrings } from "../../common/sort.ts";
import { mapPlacedRoutes } from "../policy-attachment.ts";
import {
  type BackendDefaults,
  fieldGroups,
  type Picks,
  setsGroup,
  type TrafficCandidate,
  withSettings,
} from "./traffic-backends.ts";

export interface RouteLevelInput {
  /** The backends as built, before any policy (variants start from these). */
  readonly originals: Readonly<Record<string, Backend>>;
  /** The route-level policies that apply to a placed route, most specific first (valid ones only). */
  readonly policiesFor: (listener: Listener, route: Route) => readonly TrafficCandidate[];
  /** The policy on the backend's Service (port), if any. */
  readonly serviceWinner: (b: Backend) => TrafficCandidate | undefined;
  readonly defaults: BackendDefaults;
}

export interface RouteLevelResult {
  /** The model with routes pointed at their policies' variants, the variants added to its backends. */
  readonly model: GatewayModel;
  /** The policies that apply to some route forwarding to a backend (the others change nothing). */
  readonly reached: ReadonlySet<TrafficCandidate>;
}

export function applyRouteLevelPolicies(
  model: GatewayModel,
  input: RouteLevelInput,
  problems: Problem[],
): RouteLevelResult {
  const variants = new Map<string, Backend>();
  const reached = new Set<TrafficCandidate>();
  const warned = new Set<string>();
  const overridden = (
    loser: TrafficCandidate,
    g: string,
    winner: TrafficCandidate,
    b: Backend,
    route: Route,
  ) => {
    const key = `${loser.ref.namespace}/${loser.ref.name}\n${g}\n${b.id}\n${route.source.kind}/${route.source.namespace}/${route.source.name}`;
    if (warned.has(key)) return;
    warned.add(key);
    const by = `${winner.ref.namespace}/${winner.ref.name}`;
    const why = `${g} does not apply to backend ${b.id} as ${route.source.kind} ${route.source.namespace}/${route.source.name} reaches it: BackendTrafficPolicy ${by}, on a more specific target, sets it there`;
    problems.push(problem(loser.ref, "Overridden", why, "warning"));
  };
  const variantOf = (
    wb: WeightedBackend,
    levels: readonly TrafficCandidate[],
    route: Route,
  ): WeightedBackend => {
    const b = input.originals[wb.backendId];
    if (b === undefined || wb.failStatus !== undefined) return wb;
    const service = input.serviceWinner(b);
    const picks: Picks = {};
    const deciding = new Set<TrafficCandidate>();
    for (const g of fieldGroups) {
      const setters = levels.filter((p) => setsGroup(p, g));
      const winner = service !== undefined && setsGroup(service, g) ? service : setters[0];
      if (winner === undefined) continue;
      picks[g] = winner;
      if (winner !== service) deciding.add(winner);
      for (const p of setters) if (p !== winner) overridden(p, g, winner, b, route);
    }
    if (deciding.size === 0) return wb;
    const ordered = levels.filter((p) => deciding.has(p));
    const id = trafficPolicyBackendId(
      b.id,
      ordered.map((p) => p.ref),
    );
    if (!variants.has(id)) {
      const v = withSettings(b, picks, input.defaults, problems);
      // What the Service's own policy decides is one state with the Service port's backend.
      const health = v.healthCheck !== undefined && picks.healthCheck === service ? b.id : undefined;
      const breaker = v.circuitBreaker !== undefined && picks.circuitBreaker === service ? b.id : undefined;
      const stateOf = { ...(health ? { health } : {}), ...(breaker ? { breaker } : {}) };
      variants.set(id, { ...v, id, ...(health || breaker ? { stateOf } : {}) });
    }
    return { ...wb, backendId: id };
  };
  const routed = mapPlacedRoutes(model, (listener, route) => {
    const a = route.action;
    if (a.kind !== "Forward") return route;
    const levels = input.policiesFor(listener, route);
    if (levels.length === 0) return route;
    if (a.backends.length > 0) for (const p of levels) reached.add(p);
    let changed = false;
    const backends = a.backends.map((wb) => {
      const next = variantOf(wb, levels, route);
      if (next !== wb) changed = true;
      return next;
    });
    return changed ? { ...route, action: { ...a, backends } } : route;
  });
  if (variants.size === 0) return { model: routed, reached };
  const all: Record<string, Backend> = {};
  const merged: Record<string, Backend> = { ...routed.backends, ...Object.fromEntries(variants) };
  for (const id of Object.keys(merged).sort(compareStrings)) all[id] = merged[id] as Backend;
  return { model: { ...routed, backends: all }, reached };
}
