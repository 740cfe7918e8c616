import type { Backend, PassthroughListener, Problem, SNIRoute } from "../../../model/index.ts";
import type { Gateway, ReferenceGrant } from "../../../sources/schema/gateway.ts";
import type { TCPRoute, UDPRoute } from "../../../sources/schema/stream-routes.ts";
import type { TLSRoute } from "../../../sources/schema/tlsroute.ts";
import type { ResourceSnapshot } from "../../../sources/snapshot.ts";
import { generationOf } from "../../../status/conditions.ts";
import type { ObjectStatus } from "../../../status/types.ts";
import { tcpRouteName, tlsRouteName, udpRouteName } from "../../common/names.ts";
import { arrayOf, nameOf, namespaceOf, sourceRef } from "../../common/objects.ts";
import { internalProblem } from "../../common/problems.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { compareSourceAge, compareStrings } from "../../common/sort.ts";
import type { ListenerPlan } from "../listeners.ts";
import { attachRoute, type GatewayEntry, type ParentResult } from "../route-attachment.ts";
import { httpRouteStatus } from "../status.ts";
import { type StreamRouteKind, type StreamRouteTranslation, translateStreamRoute } from "./translate.ts";

/** What the TLSRoutes or TCPRoutes of a snapshot add to the Gateway API translation. */
export interface StreamRouteAttachments {
  /** `<gw>/<listener>` → the routes placed there, by route name. */
  readonly placed: Map<string, Map<string, { route: SNIRoute; t: StreamRouteTranslation }>>;
  /** Model backends of accepted routes. */
  readonly backends: Backend[];
  /** One per route with a parent of ours, by namespace/name. */
  readonly statuses: ObjectStatus[];
  readonly problems: Problem[];
}

/**
 * Translate every route of `kind` (translate.ts), attach it to our Gateways as HTTPRoutes are attached
 * (route-attachment.ts: only TLS listeners take a TLSRoute, only TCP listeners a TCPRoute; any other
 * refuses it with NotAllowedByListeners), count it in `attached` and place it, with its hostname
 * intersections, on each listener that took it. Each route in its own try: a bug costs that route only.
 */
export function attachStreamRoutes(
  kind: StreamRouteKind,
  snapshot: ResourceSnapshot,
  index: SnapshotIndex,
  grants: readonly ReferenceGrant[],
  entries: ReadonlyMap<string, GatewayEntry>,
  labelsOf: (ns: string) => Readonly<Record<string, string>>,
  controller: string,
  attached: Map<string, Set<string>>,
): StreamRouteAttachments {
  const out: StreamRouteAttachments = { placed: new Map(), backends: [], statuses: [], problems: [] };
  const routes = [
    ...arrayOf<TLSRoute | TCPRoute | UDPRoute>(
      { TLSRoute: snapshot?.tlsRoutes, TCPRoute: snapshot?.tcpRoutes, UDPRoute: snapshot?.udpRoutes }[kind],
    ),
  ]
    .filter((r) => r?.metadata)
    .sort((a, b) => compareStrings(namespaceOf(a), namespaceOf(b)) || compareStrings(nameOf(a), nameOf(b)));
  for (const route of routes) {
    try {
      const t = translateStreamRoute(route, kind, index, grants);
      const parents = attachRoute(t, entries, labelsOf, kind);
      if (parents.length === 0) continue;
      place(t, parents, attached, out.placed);
      if (parents.some((p) => p.accepted.ok)) out.backends.push(...t.resolved);
      out.statuses.push(httpRouteStatus(t, parents, controller, generationOf(route), kind));
    } catch (err) {
      out.problems.push(internalProblem(sourceRef(kind, route), err));
    }
  }
  return out;
}

function place(
  t: StreamRouteTranslation,
  parents: readonly ParentResult[],
  attached: Map<string, Set<string>>,
  placed: StreamRouteAttachments["placed"],
): void {
  const names = { TLSRoute: tlsRouteName, TCPRoute: tcpRouteName, UDPRoute: udpRouteName };
  const name = names[t.kind](t.ref.namespace, t.ref.name);
  for (const parent of parents) {
    if (!parent.accepted.ok) continue;
    for (const a of parent.attachments) {
      const key = `${parent.gatewayKey}/${a.plan.name}`;
      // Keyed by kind too: an HTTPRoute of the same name never shares a listener, but the count must not depend on that.
      attached.set(key, (attached.get(key) ?? new Set()).add(`${t.kind}/${t.ref.namespace}/${t.ref.name}`));
      const routes = placed.get(key) ?? new Map();
      placed.set(key, routes);
      const prev = routes.get(name)?.route.hostnames ?? [];
      // Two parentRefs naming one listener (by name and by port) add their hostnames to one route.
      const hostnames = [...prev];
      for (const h of a.hosts)
        if (!hostnames.some((x) => x.hostname === h.hostname))
          hostnames.push({
            hostname: h.hostname,
            match: h.match === "Any" ? "Any" : h.match === "Exact" ? "Exact" : "WildcardAnyLabels",
          });
      routes.set(name, { t, route: { name, source: t.ref, hostnames, backends: t.backends } });
    }
  }
}

/**
 * The model listener of a programmed TLS Passthrough or TCP listener; routes oldest first (the spec's
 * tie-break: on a TCP listener, where every route takes every connection, only the oldest carries traffic).
 */
export function passthroughListener(
  gw: Gateway,
  p: ListenerPlan,
  address: string,
  placed: StreamRouteAttachments["placed"],
  gatewayKey: string,
  name: string,
): PassthroughListener {
  const routes = [...(placed.get(`${gatewayKey}/${p.name}`)?.values() ?? [])]
    .sort((a, b) => compareSourceAge(a.t.order, b.t.order))
    .map((r) => ({
      ...r.route,
      hostnames: [...r.route.hostnames].sort((x, y) => compareStrings(x.hostname, y.hostname)),
    }));
  // A TCP connection or UDP datagram names no host: such a listener's hostname is ignored, as the spec says.
  const own = p.protocol === "TCP" || p.protocol === "UDP" ? undefined : p.hostname;
  return {
    name,
    address,
    port: p.port,
    ...(own !== undefined && own.match !== "Any" ? { hostname: own.hostname } : {}),
    source: sourceRef("Gateway", gw),
    ...(p.protocol === "TCP" || p.protocol === "UDP" ? { protocol: p.protocol } : {}),
    ...(p.protocol === "TLS" && p.tls ? { terminate: { certificates: p.tls.certificates } } : {}),
    routes,
  };
}
