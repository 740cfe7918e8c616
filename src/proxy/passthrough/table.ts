/**
 * Passthrough listeners compiled for the data plane: grouped by the socket they share (address and
 * port), each with an SNI index, and each route with its backend picker. A table is immutable once
 * built except for its pickers' round-robin positions; `apply` swaps in a new one.
 */
import type { Backend, GatewayModel, PassthroughListener, SNIRoute } from "../../model/index.ts";
import { buildSniTable, type SniTable } from "../h2/sni.ts";
import { weightedPicker } from "../request/balancer.ts";

/** Where one connection goes: an endpoint, or `refused` (an invalid backendRef's share, or nothing). */
export type Destination =
  | { readonly kind: "endpoint"; readonly address: string; readonly port: number; readonly backend: string }
  | { readonly kind: "refused"; readonly why: string };

/** A route ready to serve: its name (logs) and how to pick the next destination. */
export interface CompiledSNIRoute {
  readonly name: string;
  pick(): Destination;
  /** Its listener terminates TLS (mode Terminate) with these certificates: the backend gets plain bytes. */
  readonly terminate?: SniTable;
}

/** The routes of one listener indexed by SNI name. */
interface SNIIndex {
  readonly exact: ReadonlyMap<string, CompiledSNIRoute>;
  /** `.suffix` (the wildcard without `*`), longest first; the first route in precedence order per suffix. */
  readonly wildcards: readonly { readonly suffix: string; readonly route: CompiledSNIRoute }[];
  readonly any?: CompiledSNIRoute;
}

interface CompiledListener {
  readonly name: string;
  /** Undefined: takes every SNI name no more specific listener on the socket takes. */
  readonly hostname?: string;
  readonly index: SNIIndex;
}

/** Everything served on one address and port. */
export interface PassthroughTable {
  /** Names of the model listeners sharing the socket, joined with `,` (logs). */
  readonly name: string;
  /**
   * `TCP`: no ClientHello is read, every connection takes the route for no SNI name (TCPRoute). `UDP`:
   * datagrams, each client's flow taking that route too (UDPRoute; udp-relay.ts).
   */
  readonly protocol: "TLS" | "TCP" | "UDP";
  readonly address: string;
  readonly port: number;
  readonly listeners: readonly CompiledListener[];
}

/**
 * `address:port` → table (`udp/address:port` for UDP, whose port is not a TCP one); `bind` stands in for
 * an empty model address.
 */
export function compilePassthrough(model: GatewayModel, bind: string): Map<string, PassthroughTable> {
  const groups = new Map<string, PassthroughListener[]>();
  for (const l of model.passthroughListeners ?? []) {
    const key = `${l.protocol === "UDP" ? "udp/" : ""}${l.address || bind}:${l.port}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  const out = new Map<string, PassthroughTable>();
  for (const [key, group] of groups) {
    const first = group[0] as PassthroughListener;
    out.set(key, {
      name: group.map((l) => l.name).join(","),
      // Translation never lets a TCP and a TLS listener share a port (ProtocolConflict).
      protocol: first.protocol ?? "TLS",
      address: first.address || bind,
      port: first.port,
      listeners: group.map((l) => ({
        name: l.name,
        ...(l.hostname !== undefined ? { hostname: l.hostname } : {}),
        index: indexRoutes(
          l.routes,
          model.backends,
          l.terminate ? buildSniTable(l.name, l.terminate.certificates) : undefined,
        ),
      })),
    });
  }
  return out;
}

/**
 * The route for an SNI name (undefined: the client sent none). First the listener, as for HTTP
 * listener isolation: exact hostname, else the longest wildcard covering the name, else one without a
 * hostname. Then, among that listener's routes only, Gateway API hostname precedence: exact, then the
 * longest wildcard, then a route with no hostnames; ties went to the oldest route at compile time.
 */
export function routeFor(table: PassthroughTable, sni: string | undefined): CompiledSNIRoute | undefined {
  const listener = pickListener(table.listeners, sni);
  if (listener === undefined) return undefined;
  const { exact, wildcards, any } = listener.index;
  if (sni === undefined) return any;
  const hit = exact.get(sni);
  if (hit) return hit;
  for (const w of wildcards) if (covers(w.suffix, sni)) return w.route;
  return any;
}

function pickListener(
  listeners: readonly CompiledListener[],
  sni: string | undefined,
): CompiledListener | undefined {
  let best: CompiledListener | undefined;
  let bestScore = -1;
  for (const l of listeners) {
    let score: number;
    if (l.hostname === undefined) score = 0;
    else if (sni === undefined) continue;
    else if (l.hostname === sni) score = Number.MAX_SAFE_INTEGER;
    else if (l.hostname.startsWith("*.") && covers(l.hostname.slice(1), sni)) score = l.hostname.length;
    else continue;
    if (score > bestScore) {
      best = l;
      bestScore = score;
    }
  }
  return best;
}

/** `*.foo.com` (given as `.foo.com`) covers `a.foo.com` and `a.b.foo.com`, never `foo.com`. */
function covers(suffix: string, name: string): boolean {
  return name.length > suffix.length && name.endsWith(suffix);
}

function indexRoutes(
  routes: readonly SNIRoute[],
  backends: GatewayModel["backends"],
  terminate: SniTable | undefined,
): SNIIndex {
  const exact = new Map<string, CompiledSNIRoute>();
  const wildcards = new Map<string, CompiledSNIRoute>();
  let any: CompiledSNIRoute | undefined;
  for (const r of routes) {
    const compiled = compileRoute(r, backends, terminate);
    // Routes arrive oldest first: the first to claim a name keeps it.
    for (const h of r.hostnames) {
      if (h.match === "Any") any ??= compiled;
      else if (h.match === "Exact") {
        if (!exact.has(h.hostname)) exact.set(h.hostname, compiled);
      } else if (!wildcards.has(h.hostname.slice(1))) wildcards.set(h.hostname.slice(1), compiled);
    }
  }
  const sorted = [...wildcards].sort((a, b) => b[0].length - a[0].length);
  return {
    exact,
    wildcards: sorted.map(([suffix, route]) => ({ suffix, route })),
    ...(any ? { any } : {}),
  };
}

function compileRoute(
  r: SNIRoute,
  backends: GatewayModel["backends"],
  terminate: SniTable | undefined,
): CompiledSNIRoute {
  const pickBackend = weightedPicker(
    r.backends.map((b) => ({
      weight: b.weight,
      value: b.refused ? { refused: b.backendId } : endpointPicker(backends[b.backendId], b.backendId),
    })),
  );
  return {
    name: r.name,
    ...(terminate ? { terminate } : {}),
    pick: () => {
      const chosen = pickBackend();
      if (chosen === undefined) return { kind: "refused", why: "no backend with a weight above 0" };
      if ("refused" in chosen) return { kind: "refused", why: `backendRef ${chosen.refused} is invalid` };
      return chosen();
    },
  };
}

/** Round-robin over a backend's endpoints. */
function endpointPicker(backend: Backend | undefined, id: string): () => Destination {
  const endpoints = backend?.endpoints ?? [];
  if (endpoints.length === 0) return () => ({ kind: "refused", why: `backend ${id} has no ready endpoints` });
  let next = 0;
  return () => {
    const e = endpoints[next % endpoints.length] as (typeof endpoints)[number];
    next = (next + 1) % endpoints.length;
    return { kind: "endpoint", address: e.address, port: e.port, backend: id };
  };
}
