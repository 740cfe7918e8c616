/**
 * GEP-713 direct policy attachment, generic over the policy kind (AuthPolicy, RateLimitPolicy, …).
 * A policy names targets in its own namespace: a Gateway (optionally one listener by `sectionName`), an
 * HTTPRoute (optionally one named rule), an Ingress, or, for a policy kind that opts in (`grpcRoutes`), a
 * GRPCRoute (optionally one named rule). For each placed route (a route on one listener) the most
 * specific target that has a policy decides: route rule > HTTPRoute, GRPCRoute or Ingress > Gateway
 * listener > Gateway. Several policies on the very same target: the oldest wins (creationTimestamp, then
 * namespace/name) and the others are Conflicted there. Pure: input is the snapshot's objects and the
 * built model; output is the choice per placed route and one outcome per (policy, target).
 */
import type { GatewayModel, Listener, Route, SourceRef, VirtualHost } from "../../model/index.ts";
import type { PolicyTargetRef } from "../../sources/schema/auth-policy.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { gatewayGroup } from "../../status/reasons.ts";
import { gatewayListenerSection } from "../common/names.ts";
import { arrayOf, nameOf, namespaceOf } from "../common/objects.ts";
import { compareSourceAge, type SourceOrder } from "../common/sort.ts";

export const ingressGroup = "networking.k8s.io";

/** A policy as attachment sees it. `targetRefs` may include refs implied elsewhere (an Ingress annotation). */
export interface AttachablePolicy {
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  readonly targetRefs: readonly PolicyTargetRef[];
}

/** What policies can attach to: objects in the snapshot with their section names. */
export interface PolicyTargets {
  /** `<ns>/<name>` → listener names. */
  readonly gateways: ReadonlyMap<string, ReadonlySet<string>>;
  /** `<ns>/<name>` → rule names. */
  readonly httpRoutes: ReadonlyMap<string, ReadonlySet<string>>;
  /** `<ns>/<name>`. */
  readonly ingresses: ReadonlySet<string>;
  /** `<ns>/<name>` → rule names; absent: none. */
  readonly grpcRoutes?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Which target kinds a policy kind takes beyond Gateway, HTTPRoute and Ingress. */
export interface AttachOptions {
  /** GRPCRoutes (and their named rules) are targets too. */
  readonly grpcRoutes?: boolean;
}

/** GEP-713 PolicyAncestorStatus reasons for the Accepted condition. */
export type AncestorOutcome = "Accepted" | "Conflicted" | "TargetNotFound" | "Invalid";

/** One (policy, targetRef) pair: the ancestor it reports on and what happened there. */
export interface AncestorResult {
  readonly ancestorRef: Readonly<Record<string, string>>;
  readonly outcome: AncestorOutcome;
  readonly message: string;
}

export interface AttachmentResult<P extends AttachablePolicy> {
  /** The policy deciding for a route as placed on a listener, if any. */
  readonly policyFor: (listener: Listener, route: Route) => P | undefined;
  /** The policy of every level that has one for the route, most specific first (the first decides). */
  readonly policiesFor: (listener: Listener, route: Route) => P[];
  /** Keyed by `<ns>/<name>` of the policy, in targetRef order (repeated refs once). */
  readonly ancestors: ReadonlyMap<string, readonly AncestorResult[]>;
}

export function policyTargets(snapshot: ResourceSnapshot): PolicyTargets {
  const key = (o: Parameters<typeof nameOf>[0]) => `${namespaceOf(o)}/${nameOf(o)}`;
  const gateways = new Map<string, Set<string>>();
  for (const g of arrayOf(snapshot?.gateways))
    if (g?.metadata)
      gateways.set(
        key(g),
        new Set(arrayOf(g.spec?.listeners).flatMap((l) => (typeof l?.name === "string" ? [l.name] : []))),
      );
  const ruleNames = (rules: readonly ({ name?: unknown } | null | undefined)[] | undefined) =>
    new Set(arrayOf(rules).flatMap((rule) => (typeof rule?.name === "string" ? [rule.name] : [])));
  const httpRoutes = new Map<string, Set<string>>();
  for (const r of arrayOf(snapshot?.httpRoutes))
    if (r?.metadata) httpRoutes.set(key(r), ruleNames(r.spec?.rules));
  const grpcRoutes = new Map<string, Set<string>>();
  for (const r of arrayOf(snapshot?.grpcRoutes))
    if (r?.metadata) grpcRoutes.set(key(r), ruleNames(r.spec?.rules));
  const ingresses = new Set(arrayOf(snapshot?.ingresses).flatMap((i) => (i?.metadata ? [key(i)] : [])));
  return { gateways, httpRoutes, ingresses, grpcRoutes };
}

/** Key of an exact target; also what a placed route looks up, most specific first. */
const targetKey = (kind: string, ns: string, name: string, section?: string) =>
  `${kind}/${ns}/${name}${section !== undefined ? `#${section}` : ""}`;

export function attachPolicies<P extends AttachablePolicy>(
  policies: readonly P[],
  targets: PolicyTargets,
  options: AttachOptions = {},
): AttachmentResult<P> {
  const sorted = [...policies].sort((a, b) => compareSourceAge(a.order, b.order));
  const winners = new Map<string, P>();
  const ancestors = new Map<string, AncestorResult[]>();
  for (const p of sorted) {
    const ns = p.ref.namespace;
    const results: AncestorResult[] = [];
    const seen = new Set<string>();
    for (const t of p.targetRefs) {
      if (typeof t?.name !== "string" || typeof t.kind !== "string" || typeof t.group !== "string") continue;
      const ancestorRef = {
        group: t.group,
        kind: t.kind,
        namespace: ns,
        name: t.name,
        ...(t.sectionName !== undefined ? { sectionName: t.sectionName } : {}),
      };
      const key = targetKey(t.kind, ns, t.name, t.sectionName);
      if (seen.has(`${t.group}/${key}`)) continue;
      seen.add(`${t.group}/${key}`);
      const missing = findTarget(t, ns, targets, options);
      if (missing !== undefined) {
        results.push({ ancestorRef, ...missing });
        continue;
      }
      const winner = winners.get(key);
      if (winner === undefined) {
        winners.set(key, p);
        results.push({ ancestorRef, outcome: "Accepted", message: "the policy applies to this target" });
      } else {
        const message = `${winner.ref.kind} ${winner.ref.namespace}/${winner.ref.name} targets the same object and is older (or first by namespace/name when ages tie); it applies instead`;
        results.push({ ancestorRef, outcome: "Conflicted", message });
      }
    }
    ancestors.set(`${ns}/${p.ref.name}`, results);
  }
  return {
    policyFor: (listener, route) => {
      for (const key of levelKeys(listener, route)) {
        const p = winners.get(key);
        if (p !== undefined) return p;
      }
      return undefined;
    },
    policiesFor: (listener, route) =>
      levelKeys(listener, route).flatMap((key) => {
        const p = winners.get(key);
        return p === undefined ? [] : [p];
      }),
    ancestors,
  };
}

/** Undefined when the target exists; otherwise why it does not count. */
function findTarget(
  t: PolicyTargetRef,
  ns: string,
  targets: PolicyTargets,
  options: AttachOptions,
): { outcome: AncestorOutcome; message: string } | undefined {
  const id = `${ns}/${t.name}`;
  const notFound = (what: string) => ({ outcome: "TargetNotFound" as const, message: `${what} not found` });
  const grpc = options.grpcRoutes === true && t.kind === "GRPCRoute";
  if (t.group === gatewayGroup && (t.kind === "Gateway" || t.kind === "HTTPRoute" || grpc)) {
    const byKind = t.kind === "Gateway" ? targets.gateways : grpc ? targets.grpcRoutes : targets.httpRoutes;
    const sections = byKind?.get(id);
    if (sections === undefined) return notFound(`${t.kind} ${id}`);
    if (t.sectionName !== undefined && !sections.has(t.sectionName))
      return notFound(`${t.kind === "Gateway" ? "listener" : "rule"} "${t.sectionName}" of ${t.kind} ${id}`);
    return undefined;
  }
  if (t.group === ingressGroup && t.kind === "Ingress") {
    if (!targets.ingresses.has(id)) return notFound(`Ingress ${id}`);
    if (t.sectionName !== undefined)
      return { outcome: "Invalid", message: "an Ingress has no sections; sectionName must be unset" };
    return undefined;
  }
  return {
    outcome: "Invalid",
    message: `target kind ${t.group ? `${t.group}/` : ""}${t.kind} is not supported (Gateway, HTTPRoute, networking.k8s.io Ingress)`,
  };
}

/** The target keys a placed route can be attached through, most specific first. */
function levelKeys(listener: Listener, route: Route): string[] {
  const keys: string[] = [];
  const src = route.source;
  if (src.kind === "HTTPRoute" || src.kind === "GRPCRoute") {
    if (route.ruleName !== undefined) keys.push(targetKey(src.kind, src.namespace, src.name, route.ruleName));
    keys.push(targetKey(src.kind, src.namespace, src.name));
  } else if (src.kind === "Ingress") keys.push(targetKey("Ingress", src.namespace, src.name));
  const gw = listener.source;
  if (gw.kind !== "Gateway") return keys;
  const section = gatewayListenerSection(listener.name, gw.namespace, gw.name);
  if (section !== undefined) keys.push(targetKey("Gateway", gw.namespace, gw.name, section));
  keys.push(targetKey("Gateway", gw.namespace, gw.name));
  return keys;
}

/** The model with `edit` applied to every placed route; listeners, hosts and routes left alone are shared. */
export function mapPlacedRoutes(
  model: GatewayModel,
  edit: (listener: Listener, route: Route, virtualHost: VirtualHost) => Route,
): GatewayModel {
  let changed = false;
  const listeners = model.listeners.map((l) => {
    let lChanged = false;
    const virtualHosts = l.virtualHosts.map((vh) => {
      let vChanged = false;
      const routes = vh.routes.map((r) => {
        const next = edit(l, r, vh);
        if (next !== r) vChanged = true;
        return next;
      });
      if (!vChanged) return vh;
      lChanged = true;
      return { ...vh, routes };
    });
    if (!lChanged) return l;
    changed = true;
    return { ...l, virtualHosts };
  });
  return changed ? { ...model, listeners } : model;
}
