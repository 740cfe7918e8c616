/**
 * BackendTLSPolicies and Gateway backend client certificates onto the Gateway API half of the model, after
 * every route is placed (gateway.ts calls it last):
 * 1. each backend a Gateway listener's route sends to (its weighted backends and RequestMirror filters)
 *    whose Service port has a policy that applies (targets.ts) is replaced, for that Gateway, by a TLS
 *    backend `<id>/tls` (names.ts backendTLSId) carrying what the policy asks (policy.ts); for a Gateway
 *    with `spec.tls.backend.clientCertificateRef` it is `<id>/tls@gateway/<ns>/<name>` and carries the
 *    certificate, so Gateways never share a pool across certificates;
 * 2. when the policy cannot be honoured (invalid, no valid CA) or the Gateway's client certificate
 *    reference is bad, the TLS backend carries `problem: InvalidBackendTLS` (503, never cleartext);
 * 3. each policy's ancestors are the Gateways whose routes reach a Service port it targets, winning there
 *    or not (status.ts writes their conditions).
 * The protocol inside TLS stays the backend's: `h2c` (GRPCRoute, appProtocol `kubernetes.io/h2c`) is
 * HTTP/2 by ALPN, `websocket` (appProtocol `kubernetes.io/wss`) is WebSocket over TLS. Ingress listeners
 * and TLSRoute/TCPRoute backends are not touched (docs/gateway-api.md).
 */
import type {
  Backend,
  BackendTLS,
  Filter,
  Listener,
  PassthroughListener,
  Route,
  RouteAction,
} from "../../../model/index.ts";
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import { backendTLSId } from "../../common/names.ts";
import { nameOf, namespaceOf, sourceRef } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { type CAConfigMaps, type PolicyReading, readBackendTLSPolicy } from "./policy.ts";
import { policiesForPort } from "./targets.ts";

/** Per Gateway `<ns>/<name>` that sets `spec.tls.backend.clientCertificateRef`: the certificate, or undefined when the reference is bad. */
export type GatewayClientCertificates = ReadonlyMap<
  string,
  { readonly certPem: string; readonly keyPem: string } | undefined
>;

/** What one policy met on the way: for status.ts. */
export interface PolicyUse {
  readonly policy: BackendTLSPolicy;
  readonly reading: PolicyReading;
  /** Gateway `<ns>/<name>` → why the policy lost there (the first conflict found), or undefined: it did not. */
  readonly ancestors: Map<string, string | undefined>;
}

export interface BackendTLSResult {
  readonly listeners: Listener[];
  readonly backends: Backend[];
  /** Every policy that some Gateway's route reaches, by `<ns>/<name>`. */
  readonly uses: ReadonlyMap<string, PolicyUse>;
}

const policyKey = (p: BackendTLSPolicy) => `${namespaceOf(p)}/${nameOf(p)}`;

export function applyBackendTLS(
  model: {
    readonly listeners: readonly Listener[];
    readonly passthroughListeners: readonly PassthroughListener[];
    readonly backends: readonly Backend[];
  },
  index: SnapshotIndex,
  sources: CAConfigMaps,
  clientCertificates: GatewayClientCertificates,
): BackendTLSResult {
  const byId = new Map<string, Backend>();
  for (const b of model.backends) if (!byId.has(b.id)) byId.set(b.id, b);
  const uses = new Map<string, PolicyUse>();
  const use = (p: BackendTLSPolicy): PolicyUse => {
    const key = policyKey(p);
    let u = uses.get(key);
    if (u === undefined) {
      u = { policy: p, reading: readOrFail(p, sources), ancestors: new Map() };
      uses.set(key, u);
    }
    return u;
  };
  const variants = new Map<string, Backend>();
  const replaced = new Set<string>();
  /** `<gw>|<id>` → what resolve gave: a large model references each backend from many routes. */
  const resolved = new Map<string, string>();
  /** The id a route of Gateway `gw` uses for backend `id` (recording the policies' ancestors on the way). */
  const resolve = (id: string, gw: string): string => {
    const key = `${gw}|${id}`;
    let got = resolved.get(key);
    if (got === undefined) {
      got = resolveOnce(id, gw);
      resolved.set(key, got);
    }
    return got;
  };
  const resolveOnce = (id: string, gw: string): string => {
    const b = byId.get(id);
    if (b === undefined) return id;
    const { namespace, name, port } = b.service;
    const portName = index.services
      .get(`${namespace}/${name}`)
      ?.spec?.ports?.find((p) => p.port === port && (p.protocol ?? "TCP") === "TCP")?.name;
    const found = policiesForPort(index, namespace, name, portName);
    if (found.winner === undefined) return id;
    const winner = use(found.winner);
    if (!winner.ancestors.has(gw)) winner.ancestors.set(gw, undefined);
    for (const p of found.overridden) {
      const u = use(p);
      if (!u.ancestors.has(gw)) u.ancestors.set(gw, undefined);
    }
    for (const p of found.conflicted) {
      const u = use(p);
      const where = `Service ${namespace}/${name}${found.bySection ? ` port ${portName}` : ""}`;
      if (u.ancestors.get(gw) === undefined)
        u.ancestors.set(
          gw,
          `${where} is already targeted by BackendTLSPolicy ${policyKey(found.winner)}, which takes precedence (older, or first by namespace/name)`,
        );
    }
    const withCertificate = clientCertificates.has(gw);
    const [gwNamespace = "", gwName = ""] = gw.split("/");
    const vid = backendTLSId(id, withCertificate ? { namespace: gwNamespace, name: gwName } : undefined);
    replaced.add(id);
    if (!variants.has(vid)) {
      const certificate = clientCertificates.get(gw);
      const tls = winner.reading.tls;
      const usable = tls !== undefined && (!withCertificate || certificate !== undefined);
      const full: BackendTLS | undefined = usable
        ? {
            ...tls,
            ...(certificate ? { clientCertificate: certificate } : {}),
            source: sourceRef("BackendTLSPolicy", found.winner),
          }
        : undefined;
      variants.set(
        vid,
        full ? { ...b, id: vid, tls: full } : { ...b, id: vid, problem: "InvalidBackendTLS" },
      );
    }
    return vid;
  };
  const listeners = model.listeners.map((l) => {
    if (l.source.kind !== "Gateway") return l;
    const gw = `${l.source.namespace}/${l.source.name}`;
    const to = (id: string) => resolve(id, gw);
    const virtualHosts = l.virtualHosts.map((vh) => ({
      ...vh,
      routes: vh.routes.map((r) => withBackends(r, to)),
    }));
    return { ...l, virtualHosts };
  });
  return { listeners, backends: keptBackends(model, listeners, replaced, variants), uses };
}

/** readBackendTLSPolicy, where a bug costs only this policy: it then cannot be honoured (its backends 503). */
function readOrFail(p: BackendTLSPolicy, sources: CAConfigMaps): PolicyReading {
  try {
    return readBackendTLSPolicy(p, sources);
  } catch (err) {
    const message = `translation failed for this policy: ${err instanceof Error ? err.message : String(err)}`;
    return { accepted: { ok: false, reason: "Invalid", message }, resolvedRefs: { ok: true } };
  }
}

/** A route whose backend references (weighted backends, RequestMirror filters) go through `to`. */
function withBackends(route: Route, to: (id: string) => string): Route {
  const filter = (f: Filter): Filter =>
    f.kind === "RequestMirror" && f.backendId !== undefined ? { ...f, backendId: to(f.backendId) } : f;
  const action: RouteAction =
    route.action.kind === "Forward"
      ? {
          ...route.action,
          backends: route.action.backends.map((b) => ({
            ...b,
            backendId: b.failStatus === undefined ? to(b.backendId) : b.backendId,
            filters: b.filters.map(filter),
          })),
        }
      : route.action;
  return { ...route, filters: route.filters.map(filter), action };
}

/**
 * The backends after the rewrite: the originals some listener (HTTP or passthrough) still sends to, then
 * the TLS variants. A cleartext backend every reference of which became TLS is dropped, so no pool is
 * opened to it for nothing.
 */
function keptBackends(
  model: {
    readonly passthroughListeners: readonly PassthroughListener[];
    readonly backends: readonly Backend[];
  },
  listeners: readonly Listener[],
  replaced: ReadonlySet<string>,
  variants: ReadonlyMap<string, Backend>,
): Backend[] {
  if (replaced.size === 0) return [...model.backends];
  const used = new Set<string>();
  for (const l of listeners)
    for (const vh of l.virtualHosts)
      for (const r of vh.routes) {
        for (const f of r.filters) if (f.kind === "RequestMirror" && f.backendId) used.add(f.backendId);
        if (r.action.kind !== "Forward") continue;
        for (const b of r.action.backends) {
          used.add(b.backendId);
          for (const f of b.filters) if (f.kind === "RequestMirror" && f.backendId) used.add(f.backendId);
        }
      }
  for (const p of model.passthroughListeners)
    for (const r of p.routes) for (const b of r.backends) used.add(b.backendId);
  return [...model.backends.filter((b) => !replaced.has(b.id) || used.has(b.id)), ...variants.values()];
}
