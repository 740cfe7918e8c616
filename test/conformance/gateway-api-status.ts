/**
 * The status checks of cases.json (README "Status checks"), evaluated against the statuses the running
 * gateway computed (`ObjectStatus[]`, the Kubernetes `.status` shapes) and the objects in the test's folder
 * (generations, annotations). Each returns "" when it holds, else what did not.
 */
import type { ObjectStatus } from "../../src/status/types.ts";
import { type StatusCheck, splitRef } from "./gateway-api-data.ts";
import { findObject, gatewayController, type Placed, refOf } from "./gateway-api-manifests.ts";

export interface Cond {
  type: string;
  status: string;
  reason: string;
  observedGeneration?: number;
}
export interface ParentRef {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
}
export interface RouteParent {
  parentRef: ParentRef;
  controllerName: string;
  conditions?: Cond[];
}
export interface ListenerStatus {
  name: string;
  supportedKinds?: { group?: string; kind: string }[];
  attachedRoutes: number;
  conditions?: Cond[];
}
export interface GatewayStatus {
  addresses?: { type?: string; value: string }[];
  conditions?: Cond[];
  listeners?: ListenerStatus[];
}

export interface StatusView {
  readonly statuses: readonly ObjectStatus[];
  /** The folder's objects now. */
  readonly objects: readonly Placed[];
  /** `Kind ns/name` → generation before this phase's mutations. */
  readonly generationsBefore: ReadonlyMap<string, number>;
}

export const gatewayGroup = "gateway.networking.k8s.io";

export function statusOf(view: StatusView, kind: string, ref: string) {
  const { namespace, name } = splitRef(ref);
  return view.statuses.find(
    (s) => s.target.kind === kind && s.target.namespace === namespace && s.target.name === name,
  )?.status;
}
export const gateway = (v: StatusView, ref: string) =>
  statusOf(v, "Gateway", ref) as GatewayStatus | undefined;
/** A route's status parents; `kind` is the check's `routeKind` (absent: HTTPRoute). */
export const routeParents = (v: StatusView, ref: string, kind = "HTTPRoute") =>
  ((statusOf(v, kind, ref) as { parents?: RouteParent[] } | undefined)?.parents ?? []) as RouteParent[];
export const generation = (v: StatusView, kind: string, ref: string) =>
  findObject(v.objects, kind, ref)?.object.metadata.generation ?? 1;

export function hasCondition(conds: readonly Cond[] | undefined, want: Omit<Cond, "observedGeneration">) {
  return (conds ?? []).some(
    (c) =>
      c.type === want.type && c.status === want.status && (want.reason === "" || c.reason === want.reason),
  );
}
export const show = (conds: readonly Cond[] | undefined) =>
  JSON.stringify(
    (conds ?? []).map((c) => `${c.type}=${c.status}/${c.reason}@${c.observedGeneration ?? "-"}`),
  );

/** Conditions whose observedGeneration is not `gen`, as a message; "" when all are current. */
export function stale(conds: readonly Cond[] | undefined, gen: number, what: string): string {
  const old = (conds ?? []).filter((c) => c.observedGeneration !== gen);
  return old.length ? `${what}: conditions not at generation ${gen}: ${show(old)}` : "";
}

/**
 * The route's parent entry for `gwRef` (parentRef namespace defaults to the route's). Matched by name and
 * namespace only, as upstream's helper does, so a ListenerSet parent is found the same way.
 */
function parentFor(parents: readonly RouteParent[], routeRef: string, gwRef: string) {
  const gw = splitRef(gwRef);
  const routeNs = splitRef(routeRef).namespace;
  return parents.find(
    (p) => p.parentRef.name === gw.name && (p.parentRef.namespace ?? routeNs) === gw.namespace,
  );
}

export function runStatusCheck(check: StatusCheck, view: StatusView): string {
  const c = check as Record<string, unknown>;
  const kind = (c.routeKind as string | undefined) ?? "HTTPRoute";
  switch (check.check) {
    case "GatewayAndRoutesAccepted":
      return gatewayAndRoutesAccepted(view, c.gateway as string, c.routes as string[], kind);
    case "RouteCondition": {
      const route = c.route as string;
      const want = c.condition as Cond;
      const parents = routeParents(view, route, kind);
      const entry = parentFor(parents, route, c.parent as string);
      if (!entry) return `${kind} ${route} has no status parent for ${c.parent}: ${JSON.stringify(parents)}`;
      if (!hasCondition(entry.conditions, want))
        return `${route} parent ${c.parent}: no ${want.type}=${want.status}/${want.reason || "*"} in ${show(entry.conditions)}`;
      return stale(entry.conditions, generation(view, kind, route), route);
    }
    case "RouteParents":
      return routeParentsMatch(
        view,
        c.route as string,
        c.parents as RouteParent[],
        c.namespaceRequired === true,
        kind,
      );
    case "RouteNoAcceptedParents": {
      const parents = routeParents(view, c.route as string, kind);
      const ok =
        parents.length === 0 ||
        (parents.length === 1 &&
          hasCondition(parents[0]?.conditions, { type: "Accepted", status: "False", reason: "" }));
      return ok ? "" : `${c.route} has accepted parents: ${JSON.stringify(parents)}`;
    }
    case "GatewayZeroRoutes": {
      const listeners = gateway(view, c.gateway as string)?.listeners ?? [];
      const ok = listeners.length === 0 || (listeners.length === 1 && listeners[0]?.attachedRoutes === 0);
      return ok
        ? ""
        : `${c.gateway} listeners: ${JSON.stringify(listeners.map((l) => [l.name, l.attachedRoutes]))}`;
    }
    case "GatewayListenersStatus":
      return listenersMatch(view, c.gateway as string, c.listeners as ListenerStatus[]);
    case "GatewayCondition": {
      const want = c.condition as Cond;
      const conds = gateway(view, c.gateway as string)?.conditions;
      return hasCondition(conds, want)
        ? ""
        : `${c.gateway}: no ${want.type}=${want.status}/${want.reason} in ${show(conds)}`;
    }
    case "NamespacesReady":
      return namespacesReady(view, c.namespaces as string[]);
    case "GatewayLatestConditions": {
      const conds = gateway(view, c.gateway as string)?.conditions;
      if (!conds?.length) return `${c.gateway} has no status conditions`;
      return stale(conds, generation(view, "Gateway", c.gateway as string), c.gateway as string);
    }
    case "RouteLatestConditions": {
      const route = c.route as string;
      const parents = routeParents(view, route, kind);
      if (!parents.length) return `${kind} ${route} has no status parents`;
      const gen = generation(view, kind, route);
      return parents
        .map((p) => stale(p.conditions, gen, `${route} parent ${p.parentRef.name}`))
        .filter(Boolean)
        .join("; ");
    }
    case "GenerationChanged": {
      const { kind, ref } = c.object as { kind: string; ref: string };
      const before = view.generationsBefore.get(`${kind} ${ref}`);
      const now = findObject(view.objects, kind, ref)?.object.metadata.generation;
      return before !== undefined && now !== undefined && before !== now
        ? ""
        : `${kind} ${ref} generation ${before} → ${now}`;
    }
    default:
      return `unknown status check ${check.check}`;
  }
}

function gatewayAndRoutesAccepted(
  view: StatusView,
  gwRef: string,
  routes: readonly string[],
  kind: string,
): string {
  const problems: string[] = [];
  const gw = gateway(view, gwRef);
  if (!gw) return `${gwRef} has no status`;
  if (!gw.addresses?.[0]?.value) problems.push(`${gwRef} has no status address`);
  const gwNs = splitRef(gwRef).namespace;
  for (const route of routes) {
    const routeNs = splitRef(route).namespace;
    const entry = routeParents(view, route, kind).find(
      (p) =>
        p.parentRef.group === gatewayGroup &&
        p.parentRef.kind === "Gateway" &&
        p.parentRef.name === splitRef(gwRef).name &&
        (routeNs === gwNs ? (p.parentRef.namespace ?? gwNs) === gwNs : p.parentRef.namespace === gwNs),
    );
    if (!entry)
      problems.push(
        `${kind} ${route}: no status parent {group,kind,name} for ${gwRef}: ${JSON.stringify(routeParents(view, route, kind))}`,
      );
    else if (entry.controllerName !== gatewayController)
      problems.push(`${route}: controllerName ${entry.controllerName}`);
    else if (!hasCondition(entry.conditions, { type: "Accepted", status: "True", reason: "Accepted" }))
      problems.push(`${route}: not Accepted: ${show(entry.conditions)}`);
  }
  for (const l of gw.listeners ?? [])
    for (const type of ["ResolvedRefs", "Accepted", "Programmed"])
      if (!hasCondition(l.conditions, { type, status: "True", reason: "" }))
        problems.push(`${gwRef} listener ${l.name}: ${type} not True: ${show(l.conditions)}`);
  return problems.join("; ");
}

function routeParentsMatch(
  view: StatusView,
  route: string,
  want: readonly RouteParent[],
  nsRequired: boolean,
  kind: string,
): string {
  const actual = routeParents(view, route, kind);
  const problems: string[] = [];
  for (const w of want) {
    const found = actual.find(
      (a) =>
        a.parentRef.group === w.parentRef.group &&
        a.parentRef.kind === w.parentRef.kind &&
        a.parentRef.name === w.parentRef.name &&
        (a.parentRef.namespace === w.parentRef.namespace ||
          (!nsRequired && a.parentRef.namespace === undefined)) &&
        a.controllerName === gatewayController &&
        (w.conditions ?? []).every((c) => hasCondition(a.conditions, c)),
    );
    if (!found) problems.push(`${route}: no parent like ${JSON.stringify(w)} in ${JSON.stringify(actual)}`);
  }
  return problems.join("; ");
}

function listenersMatch(view: StatusView, gwRef: string, want: readonly ListenerStatus[]): string {
  return compareListeners(gateway(view, gwRef)?.listeners ?? [], want, gwRef);
}

/** Upstream's listener comparison: exact count, supportedKinds, attachedRoutes, conditions a subset. */
export function compareListeners(
  actual: readonly ListenerStatus[],
  want: readonly ListenerStatus[],
  owner: string,
): string {
  if (actual.length !== want.length)
    return `${owner}: ${actual.length} listener statuses (${actual.map((l) => l.name)}), want ${want.length}`;
  const problems: string[] = [];
  for (const w of want) {
    const a = actual.find((l) => l.name === w.name);
    if (!a) {
      problems.push(`${owner}: no listener status ${w.name}`);
      continue;
    }
    const kinds = a.supportedKinds ?? [];
    const wantKinds = w.supportedKinds ?? [];
    const kindsOk = wantKinds.length
      ? wantKinds.every((k) =>
          kinds.some((x) => x.kind === k.kind && (x.group ?? gatewayGroup) === (k.group ?? gatewayGroup)),
        )
      : kinds.length === 0;
    if (!kindsOk)
      problems.push(`${w.name}: supportedKinds ${JSON.stringify(kinds)}, want ${JSON.stringify(wantKinds)}`);
    if (a.attachedRoutes !== w.attachedRoutes)
      problems.push(`${w.name}: attachedRoutes ${a.attachedRoutes}, want ${w.attachedRoutes}`);
    for (const c of w.conditions ?? [])
      if (!hasCondition(a.conditions, c))
        problems.push(`${w.name}: no ${c.type}=${c.status}/${c.reason || "*"} in ${show(a.conditions)}`);
  }
  return problems.join("; ");
}

function namespacesReady(view: StatusView, namespaces: readonly string[]): string {
  const problems: string[] = [];
  for (const { object } of view.objects) {
    if (object.kind !== "Gateway" || !namespaces.includes(object.metadata.namespace ?? "")) continue;
    if (object.metadata.annotations?.["gateway-api/skip-this-for-readiness"] === "true") continue;
    const conds = gateway(view, refOf(object))?.conditions;
    for (const type of ["Accepted", "Programmed"])
      if (!hasCondition(conds, { type, status: "True", reason: "" }))
        problems.push(`${refOf(object)} not ${type}: ${show(conds)}`);
  }
  return problems.join("; ");
}
