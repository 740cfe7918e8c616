/**
 * Each Ingress's `backend-protocol` (backend-protocol.ts) applied to its routes, per listener. ingress-nginx
 * keeps the protocol per location, so two Ingresses naming one Service port may speak to it differently:
 * here a route of an Ingress asking for h2c or TLS points at a variant of its backend, the one place that
 * setting lives, and other routes of the port keep the plain backend:
 * - h2c (GRPC, H2C): `<id>/h2c`, the backend GRPCRoutes use for a port without appProtocol
 *   `kubernetes.io/h2c` (names.ts h2cBackendId); a port with that appProtocol is h2c already;
 * - TLS (HTTPS, GRPCS; AUTO_HTTP on the HTTPS listener only): `<id>/tls/ingress/<ns>/<name>`, with the
 *   Ingress's proxy-ssl-* settings; the server name defaults to the Service's `<service>.<namespace>.svc`.
 *   TLS that cannot be set up (a Secret missing, without ca.crt) makes it `InvalidBackendTLS`: 503.
 * FCGI routes answer 503. Canary backends on a main route take the main Ingress's setting (canary.ts).
 * Run on the final virtual hosts, once per listener, so AUTO_HTTP can differ between the two.
 */
import type { Backend, Problem, Route, RouteAction, VirtualHost } from "../../../model/index.ts";
import { h2cBackendId, ingressTLSBackendId } from "../../common/names.ts";
import { problem } from "../../common/problems.ts";
import { compareStrings } from "../../common/sort.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import { BACKEND_PROTOCOL, type IngressBackendSettings } from "./backend-protocol.ts";

export interface BackendProtocolRouting {
  /** The virtual hosts of the HTTP listener, and of the HTTPS listener (they differ for AUTO_HTTP). */
  readonly http: VirtualHost[];
  readonly https: VirtualHost[];
  /** The backends given, with the variants added; keys sorted. */
  readonly backends: Record<string, Backend>;
  /** One per Ingress speaking TLS: what is verified, and how that differs from ingress-nginx. */
  readonly problems: Problem[];
}

type Scheme = "http" | "https";

/** The routes of each Ingress with settings pointed at the variants its protocol asks for. */
export function applyBackendProtocols(
  virtualHosts: readonly VirtualHost[],
  settings: ReadonlyMap<string, IngressBackendSettings>,
  backends: Readonly<Record<string, Backend>>,
): BackendProtocolRouting {
  if (settings.size === 0)
    return { http: [...virtualHosts], https: [...virtualHosts], backends: { ...backends }, problems: [] };
  const added = new Map<string, Backend>();
  /** Per Ingress (`ns/name`): the server names its TLS backends verify. */
  const names = new Map<string, Set<string>>();
  const variant = (route: Route, s: IngressBackendSettings, id: string, scheme: Scheme): string => {
    const base = backends[id];
    if (base === undefined) return id;
    const tls = s.tls !== undefined && (s.protocol !== "AUTO_HTTP" || scheme === "https");
    if (!tls) {
      if (base.protocol === "h2c") return id;
      const h2c = h2cBackendId(id);
      if (!added.has(h2c) && backends[h2c] === undefined)
        added.set(h2c, { ...base, id: h2c, protocol: "h2c" });
      return h2c;
    }
    const own = ingressTLSBackendId(id, route.source.namespace, route.source.name);
    if (added.has(own)) return own;
    const t = s.tls as NonNullable<IngressBackendSettings["tls"]>;
    const serverName = t.serverName ?? `${base.service.name}.${base.service.namespace}.svc`;
    const key = `${route.source.namespace}/${route.source.name}`;
    names.set(key, (names.get(key) ?? new Set()).add(serverName));
    const { problem: baseProblem, ...rest } = base;
    const kept =
      baseProblem === "ServiceNotFound" || baseProblem === "PortNotFound" ? baseProblem : undefined;
    const failed = kept ?? (t.invalid !== undefined ? "InvalidBackendTLS" : baseProblem);
    added.set(own, {
      ...rest,
      id: own,
      protocol: s.protocol === "GRPCS" ? "h2c" : base.protocol === "websocket" ? "websocket" : "http",
      tls: {
        serverName,
        ...(t.caPem !== undefined ? { caPem: t.caPem } : {}),
        ...(t.clientCertificate !== undefined ? { clientCertificate: t.clientCertificate } : {}),
        ...(t.versions !== undefined ? { versions: t.versions } : {}),
        source: route.source,
      },
      ...(failed !== undefined ? { problem: failed } : {}),
    });
    return own;
  };
  const edit = (scheme: Scheme) =>
    virtualHosts.map((vh) => {
      let changed = false;
      const routes = vh.routes.map((r) => {
        const s =
          r.source.kind === "Ingress" ? settings.get(`${r.source.namespace}/${r.source.name}`) : undefined;
        if (s === undefined || r.action.kind !== "Forward") return r;
        const action = routeAction(r, s, scheme, variant);
        if (action === r.action) return r;
        changed = true;
        return { ...r, action };
      });
      return changed ? { ...vh, routes } : vh;
    });
  const http = edit("http");
  const https = edit("https");
  const all = new Map<string, Backend>([...Object.entries(backends), ...added]);
  const sorted: Record<string, Backend> = {};
  for (const id of [...all.keys()].sort(compareStrings)) sorted[id] = all.get(id) as Backend;
  const problems = [...settings.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .flatMap(([key, s]) => {
      const used = names.get(key);
      // A TLS that cannot be set up is reported as such (proxy-ssl.ts): its backends answer 503.
      if (used === undefined || s.tls?.invalid !== undefined) return [];
      return [verifiedProblem(key, s, [...used].sort(compareStrings))];
    });
  return { http, https, backends: sorted, problems };
}

function routeAction(
  r: Route,
  s: IngressBackendSettings,
  scheme: Scheme,
  variant: (route: Route, s: IngressBackendSettings, id: string, scheme: Scheme) => string,
): RouteAction {
  const a = r.action;
  if (a.kind !== "Forward") return a;
  if (s.protocol === "FCGI") return fastCGIRefused(r);
  if (s.protocol === "AUTO_HTTP" && scheme === "http") return a;
  const chosen = a.backends.map((wb) => {
    if (wb.failStatus !== undefined) return wb;
    const id = variant(r, s, wb.backendId, scheme);
    return id === wb.backendId ? wb : { ...wb, backendId: id };
  });
  return chosen.every((wb, i) => wb === a.backends[i]) ? a : { ...a, backends: chosen };
}

function fastCGIRefused(r: Route): RouteAction {
  const detail = `Ingress ${r.source.namespace}/${r.source.name} asks for ${NGINX_PREFIX}${BACKEND_PROTOCOL} FCGI: FastCGI backends are not supported by this gateway`;
  return {
    kind: "DirectResponse",
    status: 503,
    contentType: "application/problem+json",
    body: JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, detail }),
  };
}

/** What an Ingress speaking TLS gets verified, said once, with what ingress-nginx does differently. */
function verifiedProblem(key: string, s: IngressBackendSettings, serverNames: readonly string[]): Problem {
  const [namespace, name] = key.split("/") as [string, string];
  const t = s.tls as NonNullable<IngressBackendSettings["tls"]>;
  const ref = { kind: "Ingress", namespace, name };
  const where =
    s.protocol === "AUTO_HTTP"
      ? "requests that came over HTTPS go to the backends over TLS, those over HTTP in cleartext; "
      : "";
  const against =
    t.caPem !== undefined
      ? `the CA in ca.crt of Secret ${t.secret}`
      : "the runtime's public root CAs (no proxy-ssl-secret)";
  const nameFrom =
    t.serverName !== undefined
      ? "proxy-ssl-name"
      : "each Service's cluster DNS name <service>.<namespace>.svc; proxy-ssl-name sets another";
  const differs = [
    ...(s.protocol === "GRPCS"
      ? ["ingress-nginx applies no proxy-ssl-* setting to GRPCS and verifies nothing"]
      : []),
    ...(s.protocol !== "GRPCS" && !t.verifyAsked
      ? ["ingress-nginx verifies nothing unless proxy-ssl-verify is on"]
      : []),
    ...(s.protocol !== "GRPCS" && !t.sniAsked
      ? ["ingress-nginx sends no SNI unless proxy-ssl-server-name is on"]
      : []),
  ];
  const then =
    t.caPem === undefined
      ? "a backend whose certificate is self-signed or from a private CA answers 502 until proxy-ssl-secret names a Secret of this namespace with that CA in ca.crt"
      : "a backend whose certificate does not chain to that CA or does not carry the name answers 502";
  const message = `backend-protocol ${s.protocol}: ${where}the backend's certificate is always verified, against ${against}, for the name ${serverNames.join(", ")} (${nameFrom}), which is sent as SNI${differs.length > 0 ? `; ${differs.join("; ")}` : ""}; ${then}`;
  return problem(ref, "BackendTLSVerified", message, differs.length > 0 ? "warning" : "info");
}
