import type {
  Backend,
  Listener,
  PassthroughListener,
  Problem,
  Route,
  VirtualHost,
} from "../../model/index.ts";
import type { ConfigMap, Secret } from "../../sources/schema/core.ts";
import type { Gateway, HTTPRoute } from "../../sources/schema/gateway.ts";
import type { GRPCRoute } from "../../sources/schema/grpcroute.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import { GatewayReason } from "../../status/reasons.ts";
import type { ObjectStatus } from "../../status/types.ts";
import type { HostPattern } from "../common/host-patterns.ts";
import { namespaceLabels } from "../common/label-selector.ts";
import { DEFAULT_LISTENER_SOURCE, gatewayListenerName, listenerSetListenerName } from "../common/names.ts";
import { arrayOf, nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { internalProblem, problem } from "../common/problems.ts";
import type { SnapshotIndex } from "../common/snapshot-index.ts";
import { compareStrings, type SourceOrder } from "../common/sort.ts";
import { assignAddresses, type GatewayAddress } from "./addresses.ts";
import { translateBackendTLS } from "./backend-tls/backend-tls.ts";
import { insecureFallbackFields } from "./frontend-validation.ts";
import { type BackendClientCertificate, backendClientCertificate } from "./gateway-tls.ts";
import { type GRPCRouteTranslation, translateGRPCRoute } from "./grpcroute/grpcroute.ts";
import type { HTTPRouteTranslation } from "./httproute/httproute.ts";
import { translateHTTPRouteKept } from "./httproute/memo.ts";
import type { RuleEntry } from "./httproute/rule.ts";
import { listenerSetStatus, planListenerSets } from "./listener-sets.ts";
import { isProgrammed, type ListenerPlan, planListeners } from "./listeners.ts";
import { attachRoute, type GatewayEntry, type ParentResult } from "./route-attachment.ts";
import { type AttachedHTTPRoute, refuseKindConflicts } from "./route-kind-conflicts.ts";
import { compareGatewayRoutes } from "./route-precedence.ts";
import {
  type GatewayConditions,
  gatewayClassStatus,
  gatewayStatus,
  httpRouteStatus,
  listenerStatus,
  problemsFromStatus,
} from "./status.ts";
import { attachStreamRoutes, passthroughListener } from "./stream-routes/placement.ts";
import {
  classParametersRefusal,
  gatewayParametersRefusal,
  unsupportedFieldWarnings,
} from "./unsupported-fields.ts";

export interface GatewayOptions {
  readonly gatewayController: string;
  readonly gatewayAddressPool?: string;
  /** Refuse certificates outside their validity period at this time (absent: no clock check). */
  readonly nowMs?: number;
}

export interface GatewayAPITranslation {
  /** One per programmed Gateway listener, Gateways by namespace/name, listeners in spec order. */
  readonly listeners: Listener[];
  /** One per programmed TLS Passthrough listener, in the same order. */
  readonly passthroughListeners: PassthroughListener[];
  readonly backends: Backend[];
  /** GatewayClasses, then Gateways, then HTTPRoutes, then TLSRoutes, each by namespace/name. */
  readonly statuses: ObjectStatus[];
  readonly problems: Problem[];
}

/** A Gateway of ours with its listeners planned and its own conditions decided. */
type PlannedGateway = GatewayEntry & {
  readonly duplicates: string[];
  readonly overLimit: number;
  readonly conds: GatewayConditions;
  /** `spec.tls.backend.clientCertificateRef`, when set. */
  readonly backendClient: BackendClientCertificate | undefined;
};

const addressOf = (addresses: ReadonlyMap<string, GatewayAddress>, key: string): GatewayAddress =>
  addresses.get(key) ?? { kind: "assigned", address: "", reported: false };

/** The routes of one virtual host, by route name (a route attached twice through two parentRefs counts once). */
type HostGroup = { host: HostPattern; routes: Map<string, { entry: RuleEntry; source: SourceOrder }> };

const byNsName = <T extends { metadata?: { name?: string; namespace?: string } }>(a: T, b: T) =>
  compareStrings(namespaceOf(a), namespaceOf(b)) || compareStrings(nameOf(a), nameOf(b));

/**
 * The Gateway API half of translation, in a fixed order:
 * 1. our GatewayClasses (`spec.controllerName` = our controller) and the Gateways naming them;
 * 2. each Gateway's listeners validated (listeners.ts) and its address chosen (addresses.ts);
 * 3. each HTTPRoute and GRPCRoute translated alone (httproute/, grpcroute/), then attached to our Gateways
 *    (route-attachment.ts), an HTTPRoute and a GRPCRoute on one listener hostname settled by age
 *    (route-kind-conflicts.ts);
 *    then each TLSRoute and TCPRoute likewise, onto TLS Passthrough and TCP listeners only
 *    (stream-routes/placement.ts);
 * 4. accepted attachments placed on virtual hosts named by hostname intersection, sorted by precedence;
 * 5. statuses for every class, Gateway and route of ours (status.ts), problems read from them;
 * 6. BackendTLSPolicies put TLS (and each Gateway's backend client certificate) on the backends its routes
 *    reach (backend-tls/), and get their statuses.
 * Every object is handled in its own try: a bug triggered by one object costs that object only.
 */
export function translateGatewayAPI(
  snapshot: ResourceSnapshot,
  index: SnapshotIndex,
  opts: GatewayOptions,
): GatewayAPITranslation {
  const problems: Problem[] = [];
  const statuses: ObjectStatus[] = [];
  const classes = arrayOf(snapshot?.gatewayClasses).filter(
    (c) => c?.spec?.controllerName === opts.gatewayController,
  );
  const classNames = new Set(classes.map(nameOf));
  const classRefusals = new Map<string, string>();
  for (const c of [...classes].sort((a, b) => compareStrings(nameOf(a), nameOf(b)))) {
    const refusal = classParametersRefusal(c);
    if (refusal !== undefined) classRefusals.set(nameOf(c), refusal);
    statuses.push(gatewayClassStatus(nameOf(c), opts.gatewayController, generationOf(c), refusal));
  }
  const gateways = arrayOf(snapshot?.gateways)
    .filter((g) => g?.metadata && classNames.has(g.spec?.gatewayClassName))
    .sort(byNsName);
  if (opts.gatewayAddressPool && !/^[0-9.]+\/\d{1,2}$/.test(opts.gatewayAddressPool)) {
    problems.push(
      problem(
        DEFAULT_LISTENER_SOURCE,
        "InvalidOption",
        `gatewayAddressPool "${opts.gatewayAddressPool}" is not an IPv4 CIDR; no pool is used`,
      ),
    );
  }
  const addresses = assignAddresses(gateways, opts.gatewayAddressPool);
  const secrets = new Map<string, Secret>();
  for (const s of arrayOf(snapshot?.secrets))
    if (s?.metadata) secrets.set(`${namespaceOf(s)}/${nameOf(s)}`, s);
  const grants = arrayOf(snapshot?.referenceGrants);
  const configMaps = new Map<string, ConfigMap>();
  for (const c of arrayOf(snapshot?.configMaps))
    if (c?.metadata) configMaps.set(`${namespaceOf(c)}/${nameOf(c)}`, c);
  const caSources = { configMaps, unreadable: arrayOf(snapshot?.unreadable) };
  const entries = new Map<string, PlannedGateway>();
  for (const gw of gateways) {
    try {
      const planned = planListeners(gw, secrets, grants, opts.nowMs, caSources);
      const key = `${namespaceOf(gw)}/${nameOf(gw)}`;
      const backendClient = backendClientCertificate(gw, secrets, grants, opts.nowMs);
      const conds = gatewayConditions(
        { gateway: gw, key, ...planned },
        addressOf(addresses, key),
        backendClient?.outcome,
        gatewayParametersRefusal(gw, classRefusals.get(gw.spec?.gatewayClassName)),
      );
      const down = !conds.accepted.ok ? conds.accepted : !conds.programmed.ok ? conds.programmed : undefined;
      const notServing = down && !down.ok ? { reason: down.reason, message: down.message } : undefined;
      const rest = { conds, backendClient, ...(notServing ? { notServing } : {}) };
      entries.set(key, { gateway: gw, key, ...planned, ...rest });
    } catch (err) {
      problems.push(internalProblem(sourceRef("Gateway", gw), err));
    }
  }
  const labelsOf = namespaceLabels(arrayOf(snapshot?.namespaces));
  const sets = planListenerSets(
    arrayOf(snapshot?.listenerSets),
    entries,
    (key) => ({
      accepted: entries.get(key)?.conds.accepted.ok === true,
      programmed:
        entries.get(key)?.conds.programmed.ok === true && addressOf(addresses, key).kind === "assigned",
    }),
    { secrets, grants, nowMs: opts.nowMs, labelsOf },
    problems,
  );
  // The parents routes may name: our Gateways, and the ListenerSets attached to them.
  const parentsOf = new Map<string, GatewayEntry>([
    ...entries,
    ...sets.map((s) => [s.entry.key, s.entry] as const),
  ]);
  const attached = new Map<string, Set<string>>(); // `<gw>/<listener>` → route keys
  const hosts = new Map<string, Map<string, HostGroup>>(); // `<gw>/<listener>` → hostname → routes
  const backends: Backend[] = [];
  const routeStatuses: ObjectStatus[] = [];
  // HTTPRoutes, then GRPCRoutes: attached first, as a GRPCRoute and an HTTPRoute may not share a hostname.
  const httpLike: (AttachedHTTPRoute & { t: HTTPRouteTranslation | GRPCRouteTranslation })[] = [];
  const attachEach = <R extends HTTPRoute | GRPCRoute>(
    kind: AttachedHTTPRoute["kind"],
    list: readonly R[] | undefined,
    translateRoute: (route: R) => HTTPRouteTranslation | GRPCRouteTranslation,
  ) => {
    for (const route of [...arrayOf(list)].filter((r) => r?.metadata).sort(byNsName)) {
      try {
        const t = translateRoute(route);
        const parents = attachRoute(t, parentsOf, labelsOf, kind);
        if (parents.length > 0) httpLike.push({ kind, t, ref: t.ref, order: t.order, parents });
      } catch (err) {
        problems.push(internalProblem(sourceRef(kind, route), err));
      }
    }
  };
  attachEach("HTTPRoute", snapshot?.httpRoutes, (r) => translateHTTPRouteKept(r, index, grants));
  attachEach("GRPCRoute", snapshot?.grpcRoutes, (r) => translateGRPCRoute(r, index, grants));
  for (const [i, parents] of refuseKindConflicts(httpLike).entries()) {
    const { kind, t } = httpLike[i] as (typeof httpLike)[0];
    try {
      place(t, parents, attached, hosts);
      if (parents.some((p) => p.accepted.ok)) backends.push(...t.backends);
      routeStatuses.push(httpRouteStatus(t, parents, opts.gatewayController, generationOf(t.route), kind));
    } catch (err) {
      problems.push(internalProblem(t.ref, err));
    }
  }
  const stream = (kind: "TLSRoute" | "TCPRoute" | "UDPRoute") =>
    attachStreamRoutes(kind, snapshot, index, grants, parentsOf, labelsOf, opts.gatewayController, attached);
  const tls = stream("TLSRoute");
  const tcp = stream("TCPRoute");
  const udp = stream("UDPRoute");
  problems.push(
    ...unsupportedFieldWarnings(gateways, [
      ...arrayOf(snapshot?.httpRoutes),
      ...arrayOf(snapshot?.grpcRoutes),
      ...arrayOf(snapshot?.tlsRoutes),
      ...arrayOf(snapshot?.tcpRoutes),
      ...arrayOf(snapshot?.udpRoutes),
    ]),
  );
  backends.push(...tls.backends, ...tcp.backends, ...udp.backends);
  problems.push(...tls.problems, ...tcp.problems, ...udp.problems);
  const listeners: Listener[] = [];
  const passthroughListeners: PassthroughListener[] = [];
  const placedOf = (p: ListenerPlan) =>
    p.protocol === "TLS" ? tls.placed : p.protocol === "TCP" ? tcp.placed : udp.placed;
  /** The model listeners of an entry's programmed plans, bound on `address`; `name` names each. */
  const serve = (entry: GatewayEntry, address: string, name: (p: ListenerPlan) => string) => {
    for (const p of entry.plans.filter(isProgrammed)) {
      if (p.protocol === "TLS" || p.protocol === "TCP" || p.protocol === "UDP")
        passthroughListeners.push(
          passthroughListener(entry.gateway, p, address, placedOf(p), entry.key, name(p)),
        );
      else
        listeners.push(
          modelListener(entry.gateway, p, address, hosts.get(`${entry.key}/${p.name}`), name(p)),
        );
    }
  };
  for (const entry of entries.values()) {
    try {
      const gw = entry.gateway;
      const address = addressOf(addresses, entry.key);
      const gen = generationOf(gw);
      const conds = entry.conds;
      const listenerStatuses = entry.plans.map((p) =>
        listenerStatus(p, attached.get(`${entry.key}/${p.name}`)?.size ?? 0, gen),
      );
      statuses.push(
        gatewayStatus(
          { namespace: namespaceOf(gw), name: nameOf(gw) },
          address.kind === "assigned" && address.reported ? address.address : undefined,
          conds,
          listenerStatuses,
          gen,
          (gw.spec?.allowedListeners?.namespaces?.from ?? "None") === "None"
            ? undefined
            : sets.filter((s) => s.parentKey === entry.key && s.accepted.ok).length,
        ),
      );
      if (!conds.accepted.ok || !conds.programmed.ok || address.kind !== "assigned") continue;
      serve(entry, address.address, (p) => gatewayListenerName(namespaceOf(gw), nameOf(gw), p.name));
    } catch (err) {
      problems.push(internalProblem(sourceRef("Gateway", entry.gateway), err));
    }
  }
  for (const s of sets) {
    const address = addressOf(addresses, s.parentKey);
    if (!s.programmed.ok || address.kind !== "assigned") continue;
    const { namespace, name } = s.entry.listenerSet ?? { namespace: "", name: "" };
    serve(s.entry, address.address, (p) => listenerSetListenerName(namespace, name, p.name));
  }
  statuses.push(...routeStatuses, ...tls.statuses, ...tcp.statuses, ...udp.statuses);
  statuses.push(...sets.map((s) => listenerSetStatus(s, attached)));
  for (const s of statuses) problems.push(...problemsFromStatus(s));
  // 6. BackendTLSPolicies and backend client certificates (backend-tls/), on the placed routes.
  const model = { listeners, passthroughListeners, backends };
  const withTLS = translateBackendTLS(model, snapshot, index, caSources, entries, opts.gatewayController);
  statuses.push(...withTLS.statuses);
  problems.push(...withTLS.problems);
  return { ...withTLS, passthroughListeners, statuses, problems };
}

/** Count accepted attachments and put the route's entries on the virtual hosts of each listener. */
function place(
  t: HTTPRouteTranslation | GRPCRouteTranslation,
  parents: readonly ParentResult[],
  attached: Map<string, Set<string>>,
  hosts: Map<string, Map<string, HostGroup>>,
): void {
  for (const parent of parents) {
    if (!parent.accepted.ok) continue;
    for (const a of parent.attachments) {
      const key = `${parent.gatewayKey}/${a.plan.name}`;
      attached.set(key, (attached.get(key) ?? new Set()).add(`${t.ref.namespace}/${t.ref.name}`));
      const groups = hosts.get(key) ?? new Map<string, HostGroup>();
      hosts.set(key, groups);
      for (const host of a.hosts) {
        const group = groups.get(host.hostname) ?? { host, routes: new Map() };
        groups.set(host.hostname, group);
        for (const entry of t.entries) group.routes.set(entry.name, { entry, source: t.order });
      }
    }
  }
}

function modelListener(
  gw: Gateway,
  p: ListenerPlan,
  address: string,
  groups: Map<string, HostGroup> | undefined,
  name: string,
): Listener {
  // A listener hostname its routes do not cover still gets an (empty) virtual host, so such requests
  // end here with 404 instead of finding a broader listener on the same socket.
  const own = p.hostname;
  const withOwn =
    own !== undefined && own.match !== "Any" && !groups?.has(own.hostname)
      ? [...(groups?.values() ?? []), { host: own, routes: new Map() }]
      : [...(groups?.values() ?? [])];
  const virtualHosts: VirtualHost[] = withOwn
    .sort((a, b) => compareStrings(a.host.hostname, b.host.hostname))
    .map((g) => ({
      hostname: g.host.hostname,
      match: g.host.match,
      routes: [...g.routes.values()]
        .map(({ entry, source }) => ({ ...entry, order: { ...entry, source } }))
        .sort((a, b) => compareGatewayRoutes(a.order, b.order))
        .map(({ ruleIndex: _r, matchIndex: _m, grpc: _g, order: _o, ...route }): Route => route),
    }));
  return {
    name,
    address,
    port: p.port,
    protocol: p.protocol === "HTTPS" ? "HTTPS" : "HTTP",
    ...(own !== undefined && own.match !== "Any" ? { hostname: own.hostname } : {}),
    ...(p.protocol === "HTTPS" && p.tls ? { tls: p.tls } : {}),
    source: sourceRef("Gateway", gw),
    virtualHosts,
  };
}

/**
 * Gateway Accepted (parameters, listener validity, address type), Programmed (accepted and an address),
 * and ResolvedRefs when `spec.tls.backend` names a client certificate (gateway-tls.ts).
 */
function gatewayConditions(
  entry: GatewayEntry & { duplicates: string[]; overLimit: number },
  address: GatewayAddress,
  resolvedRefs: GatewayConditions["resolvedRefs"],
  parameters: string | undefined,
): GatewayConditions {
  const invalid = entry.plans.filter((p) => !p.accepted.ok || p.conflict).map((p) => p.name);
  const notes = [
    invalid.length > 0 ? `listeners not valid: ${invalid.join(", ")}` : "",
    entry.duplicates.length > 0
      ? `listener names repeated (later ones ignored): ${entry.duplicates.join(", ")}`
      : "",
    entry.overLimit > 0 ? `${entry.overLimit} listener(s) beyond the limit of 64 ignored` : "",
  ].filter(Boolean);
  const valid = entry.plans.length - invalid.length;
  let accepted: GatewayConditions["accepted"];
  if (parameters !== undefined)
    accepted = { ok: false, reason: GatewayReason.InvalidParameters, message: parameters };
  else if (address.kind === "unsupported")
    accepted = { ok: false, reason: GatewayReason.UnsupportedAddress, message: address.message };
  else if (valid === 0)
    accepted = {
      ok: false,
      reason: GatewayReason.ListenersNotValid,
      message: notes.join("; ") || "the Gateway has no listeners",
    };
  else if (notes.length > 0)
    accepted = { ok: true, okReason: GatewayReason.ListenersNotValid, okMessage: notes.join("; ") };
  else accepted = { ok: true };
  const programmed: GatewayConditions["programmed"] = !accepted.ok
    ? { ok: false, reason: GatewayReason.Invalid, message: "the Gateway is not accepted" }
    : address.kind === "exhausted"
      ? { ok: false, reason: GatewayReason.AddressNotAssigned, message: address.message }
      : address.kind === "unusable"
        ? { ok: false, reason: GatewayReason.AddressNotUsable, message: address.message }
        : { ok: true };
  const insecure = insecureFallbackFields(entry.gateway);
  const insecureFrontend =
    insecure.length > 0
      ? `spec.tls.frontend (${insecure.join(", ")}) is AllowInsecureFallback: clients without a valid certificate are served too`
      : undefined;
  return {
    accepted,
    programmed,
    ...(resolvedRefs ? { resolvedRefs } : {}),
    ...(insecureFrontend ? { insecureFrontend } : {}),
  };
}
