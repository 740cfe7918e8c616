/**
 * The status checks `gateway-api-rest` adds (its README, "Status checks"), on the statuses the running
 * gateway computed. The first file's checks (route checks now with `routeKind`) are delegated to
 * gateway-api-status.ts; a check neither knows fails as unknown. Each returns "" when it holds.
 */
import type { StatusCheck } from "../gateway-api-data.ts";
import { splitRef } from "../gateway-api-data.ts";
import { findObject, gatewayController } from "../gateway-api-manifests.ts";
import {
  type Cond,
  compareListeners,
  type GatewayStatus,
  gateway,
  gatewayGroup,
  generation,
  hasCondition,
  type ListenerStatus,
  routeParents,
  runStatusCheck,
  type StatusView,
  show,
  stale,
  statusOf,
} from "../gateway-api-status.ts";
import { substitute } from "./placeholders.ts";

interface ListenerSetStatus {
  conditions?: Cond[];
  listeners?: ListenerStatus[];
}
interface PolicyAncestor {
  ancestorRef: { name: string; namespace?: string; kind?: string };
  conditions?: Cond[];
}

/** GatewayClasses are cluster-scoped: found by name alone (statusOf splits `ns/name`). */
const classConditions = (v: StatusView, name: string) =>
  (
    v.statuses.find((s) => s.target.kind === "GatewayClass" && s.target.name === name)?.status as
      | { conditions?: Cond[] }
      | undefined
  )?.conditions;
const listenerSet = (v: StatusView, ref: string) =>
  statusOf(v, "ListenerSet", ref) as ListenerSetStatus | undefined;
const want = (c: Cond) => `${c.type}=${c.status}/${c.reason || "*"}`;

/** The first file's view, plus the address pool of the test (for `<usable pool entry value>`). */
export interface RestStatusView extends StatusView {
  readonly pool: string;
}

export function runRestStatusCheck(check: StatusCheck, view: RestStatusView): string {
  const c = check as Record<string, unknown>;
  switch (check.check) {
    case "GatewayAndTLSRoutesAccepted":
      return gatewayAndTlsRoutes(view, c.gateway as string, c.routes as string[]);
    case "RoutesAndParentAccepted":
      return routesAndListenerSet(view, c.parent as { kind: string; ref: string }, c);
    case "GatewayAddress": {
      const gw = c.gateway as string;
      const latest = gatewayLatest(view, gw);
      if (latest) return latest;
      const typed = (gateway(view, gw)?.addresses ?? []).some((a) => a.type);
      return typed
        ? ""
        : `${gw}: no status address with a type: ${JSON.stringify(gateway(view, gw)?.addresses)}`;
    }
    case "GatewayCondition": {
      // Upstream fails at once when it reads a stale condition; a wait that sees one fails the same way.
      const gw = c.gateway as string;
      const cond = c.condition as Cond;
      const conds = gateway(view, gw)?.conditions;
      return (
        stale(conds, generation(view, "Gateway", gw), gw) ||
        (hasCondition(conds, cond) ? "" : `${gw}: no ${want(cond)} in ${show(conds)}`)
      );
    }
    case "GatewayListenerConditions":
      return listenerConditions(gateway(view, c.gateway as string)?.listeners, [c.listener as string], c);
    case "GatewayListenersConditions":
      return listenerConditions(gateway(view, c.gateway as string)?.listeners, c.listeners as string[], c);
    case "GatewayAttachedListenerSets": {
      const gw = c.gateway as string;
      const count = (gateway(view, gw) as { attachedListenerSets?: number } | undefined)
        ?.attachedListenerSets;
      return (
        gatewayLatest(view, gw) ||
        ((count ?? 0) === c.count ? "" : `${gw}: attachedListenerSets ${count ?? "absent"}, want ${c.count}`)
      );
    }
    case "GatewaySpecAddressCount": {
      const spec = findObject(view.objects, "Gateway", c.gateway as string)?.object.spec;
      const n = ((spec?.addresses ?? []) as unknown[]).length;
      return n === c.count ? "" : `${c.gateway}: ${n} spec.addresses, want ${c.count}`;
    }
    case "GatewayStatusAddresses":
      return statusAddresses(view, c);
    case "GatewayInfrastructurePropagated":
      return infrastructurePropagated(view, c);
    case "ListenerSetCondition": {
      const ls = c.listenerSet as string;
      const cond = c.condition as Cond;
      const conds = listenerSet(view, ls)?.conditions;
      if (!conds) return `ListenerSet ${ls} has no status`;
      return (
        stale(conds, generation(view, "ListenerSet", ls), ls) ||
        (hasCondition(conds, cond) ? "" : `${ls}: no ${want(cond)} in ${show(conds)}`)
      );
    }
    case "ListenerSetListenerConditions":
      return (
        listenerSetLatest(view, c.listenerSet as string) ||
        listenerConditions(listenerSet(view, c.listenerSet as string)?.listeners, c.listeners as string[], c)
      );
    case "ListenerSetListenersStatus": {
      const ls = c.listenerSet as string;
      return (
        listenerSetLatest(view, ls) ||
        compareListeners(listenerSet(view, ls)?.listeners ?? [], c.listeners as ListenerStatus[], ls)
      );
    }
    case "BackendTLSPolicyCondition":
      return policyCondition(view, c.policy as string, c.ancestor as string, c.condition as Cond);
    case "BackendTLSPolicyLatestConditions": {
      const policy = c.policy as string;
      const gen = generation(view, "BackendTLSPolicy", policy);
      return ancestors(view, policy)
        .map((a) => stale(a.conditions, gen, `${policy} ancestor ${a.ancestorRef.name}`))
        .filter(Boolean)
        .join("; ");
    }
    case "GatewayClassAccepted": {
      const name = c.gatewayClass as string;
      const conds = classConditions(view, name);
      const accepted = (conds ?? []).find((x) => x.type === "Accepted");
      return (
        classLatest(view, name) ||
        (accepted && (c.status === "" || accepted.status === c.status)
          ? ""
          : `GatewayClass ${name}: no Accepted${c.status ? `=${c.status}` : ""} in ${show(conds)}`)
      );
    }
    case "GatewayClassLatestConditions":
      return classLatest(view, c.gatewayClass as string);
    default:
      return runStatusCheck(check, view);
  }
}

function gatewayLatest(view: StatusView, gw: string): string {
  const conds = gateway(view, gw)?.conditions;
  if (!conds?.length) return `${gw} has no status conditions`;
  return stale(conds, generation(view, "Gateway", gw), gw);
}

function listenerSetLatest(view: StatusView, ls: string): string {
  const conds = listenerSet(view, ls)?.conditions;
  if (!conds?.length) return `ListenerSet ${ls} has no status conditions`;
  return stale(conds, generation(view, "ListenerSet", ls), ls);
}

function classLatest(view: StatusView, name: string): string {
  const conds = classConditions(view, name);
  if (!conds?.length) return `GatewayClass ${name} has no status conditions`;
  return stale(conds, generation(view, "GatewayClass", name), `GatewayClass ${name}`);
}

/** Every named listener is in status with every condition (reason "" accepts any). */
function listenerConditions(
  listeners: readonly ListenerStatus[] | undefined,
  names: readonly string[],
  c: Record<string, unknown>,
): string {
  const problems: string[] = [];
  for (const name of names) {
    const l = (listeners ?? []).find((x) => x.name === name);
    if (!l) {
      problems.push(`no listener status ${name} in ${JSON.stringify((listeners ?? []).map((x) => x.name))}`);
      continue;
    }
    for (const cond of c.conditions as Cond[])
      if (!hasCondition(l.conditions, cond))
        problems.push(`${name}: no ${want(cond)} in ${show(l.conditions)}`);
  }
  return problems.join("; ");
}

/** GatewayAndTLSRoutesMustBeAccepted: a typed address, latest conditions, each route Accepted by it. */
function gatewayAndTlsRoutes(view: StatusView, gw: string, routes: readonly string[]): string {
  const status = gateway(view, gw) as GatewayStatus | undefined;
  if (!status) return `${gw} has no status`;
  const problems: string[] = [];
  if (!(status.addresses ?? []).some((a) => a.type)) problems.push(`${gw} has no status address with a type`);
  const latest = gatewayLatest(view, gw);
  if (latest) problems.push(latest);
  const { namespace: gwNs, name } = splitRef(gw);
  for (const route of routes) {
    const routeNs = splitRef(route).namespace;
    const entry = routeParents(view, route, "TLSRoute").find(
      (p) =>
        p.parentRef.group === gatewayGroup &&
        p.parentRef.kind === "Gateway" &&
        p.parentRef.name === name &&
        (routeNs === gwNs ? (p.parentRef.namespace ?? gwNs) === gwNs : p.parentRef.namespace === gwNs) &&
        p.controllerName === gatewayController,
    );
    if (!entry) problems.push(`TLSRoute ${route}: no status parent for ${gw} with our controllerName`);
    else if (!hasCondition(entry.conditions, { type: "Accepted", status: "True", reason: "Accepted" }))
      problems.push(`TLSRoute ${route}: not Accepted: ${show(entry.conditions)}`);
  }
  return problems.join("; ");
}

/** RoutesAndParentMustBeAccepted with a ListenerSet parent: each route Accepted, every listener ready. */
function routesAndListenerSet(
  view: StatusView,
  parent: { kind: string; ref: string },
  c: Record<string, unknown>,
): string {
  const kind = (c.routeKind as string | undefined) ?? "HTTPRoute";
  const { namespace: parentNs, name } = splitRef(parent.ref);
  const problems: string[] = [];
  for (const route of c.routes as string[]) {
    const routeNs = splitRef(route).namespace;
    const entry = routeParents(view, route, kind).find(
      (p) =>
        p.parentRef.group === gatewayGroup &&
        p.parentRef.kind === parent.kind &&
        p.parentRef.name === name &&
        (p.parentRef.namespace ?? routeNs) === parentNs &&
        p.controllerName === gatewayController,
    );
    if (!entry) problems.push(`${kind} ${route}: no status parent for ${parent.kind} ${parent.ref}`);
    else if (!hasCondition(entry.conditions, { type: "Accepted", status: "True", reason: "Accepted" }))
      problems.push(`${kind} ${route}: not Accepted: ${show(entry.conditions)}`);
  }
  const latest = listenerSetLatest(view, parent.ref);
  if (latest) problems.push(latest);
  for (const l of listenerSet(view, parent.ref)?.listeners ?? [])
    for (const type of ["ResolvedRefs", "Accepted", "Programmed"])
      if (!hasCondition(l.conditions, { type, status: "True", reason: "" }))
        problems.push(`${parent.ref} listener ${l.name}: ${type} not True: ${show(l.conditions)}`);
  return problems.join("; ");
}

function ancestors(view: StatusView, policy: string): PolicyAncestor[] {
  return (
    (statusOf(view, "BackendTLSPolicy", policy) as { ancestors?: PolicyAncestor[] } | undefined)?.ancestors ??
    []
  );
}

function policyCondition(view: StatusView, policy: string, ancestor: string, cond: Cond): string {
  const gen = generation(view, "BackendTLSPolicy", policy);
  const all = ancestors(view, policy);
  const old = all
    .map((a) => stale(a.conditions, gen, `${policy} ancestor ${a.ancestorRef.name}`))
    .find(Boolean);
  if (old) return old;
  const { namespace, name } = splitRef(ancestor);
  const found = all.some(
    (a) =>
      a.ancestorRef.name === name &&
      (a.ancestorRef.namespace === undefined || a.ancestorRef.namespace === namespace) &&
      hasCondition(a.conditions, cond),
  );
  return found
    ? ""
    : `BackendTLSPolicy ${policy}: no ancestor ${ancestor} with ${want(cond)} in ${JSON.stringify(all)}`;
}

/** Exactly `count` addresses; then the usable one present, none of the others, its type the spec's. */
function statusAddresses(view: RestStatusView, c: Record<string, unknown>): string {
  const gw = c.gateway as string;
  const addresses = gateway(view, gw)?.addresses ?? [];
  if (addresses.length !== c.count)
    return `${gw}: ${addresses.length} status addresses ${JSON.stringify(addresses)}, want ${c.count}`;
  const mustContain = substitute(c.mustContain, view) as string;
  const mustNot = substitute(c.mustNotContain, view) as string[];
  const found = addresses.find((a) => a.value === mustContain);
  if (!found) return `${gw}: status addresses ${JSON.stringify(addresses)} lack ${mustContain}`;
  const bad = addresses.filter((a) => mustNot.includes(a.value));
  if (bad.length) return `${gw}: status addresses hold ${JSON.stringify(bad)}`;
  if (c.typeMustEqualSpecType === true) {
    const spec = findObject(view.objects, "Gateway", gw)?.object.spec;
    const entry = ((spec?.addresses ?? []) as { type?: string; value?: string }[]).find(
      (a) => a.value === mustContain,
    );
    if ((entry?.type ?? "IPAddress") !== (found.type ?? "IPAddress"))
      return `${gw}: status address type ${found.type}, spec says ${entry?.type}`;
  }
  return "";
}

/**
 * GatewayInfrastructure: upstream lists the ServiceAccounts, Pods and Services its label selector picks in
 * the Gateway's namespace and wants the first of each to carry the infrastructure labels and annotations.
 * Folder mode creates no object; the Gateway's infrastructure record at /debug/status is the metadata
 * Gatehouse puts on each object it creates for the Gateway (in a cluster its Service, built from the same
 * record), so it stands in for all three kinds. It has no namespace (docs/conformance.md).
 */
function infrastructurePropagated(view: StatusView, c: Record<string, unknown>): string {
  const gw = c.gateway as string;
  const { namespace, name } = splitRef(gw);
  const record = view.statuses.find(
    (s) => s.target.kind === "Gateway" && s.target.namespace === namespace && s.target.name === name,
  )?.infrastructure;
  if (!record) return `${gw}: no infrastructure record with its status`;
  const selector = /^([^=!,\s]+)=([^=!,\s]*)$/.exec(c.labelSelector as string);
  if (!selector) return `${gw}: label selector ${JSON.stringify(c.labelSelector)} is not one key=value`;
  const [, key, value] = selector as unknown as [string, string, string];
  if (record.labels[key] !== value)
    return `${gw}: its record does not match ${c.labelSelector}: ${JSON.stringify(record.labels)}`;
  const missing = (want: unknown, have: Readonly<Record<string, string>>) =>
    Object.entries((want ?? {}) as Record<string, string>)
      .filter(([k, v]) => have[k] !== v)
      .map(([k, v]) => `${k}=${v}`);
  const problems = [
    ...missing(c.labels, record.labels).map((l) => `label ${l}`),
    ...missing(c.annotations, record.annotations).map((a) => `annotation ${a}`),
  ];
  return problems.length ? `${gw}: its record lacks ${problems.join(", ")}: ${JSON.stringify(record)}` : "";
}
