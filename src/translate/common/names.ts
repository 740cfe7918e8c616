/**
 * Stable names, built and read here only. Routes, listeners, backends and policies are named after the
 * object and position they came from, so a log line, a metric label or a golden diff can point at the
 * YAML that produced them.
 */
import type { SourceRef } from "../../model/index.ts";

/** What the default listeners, and problems about the gateway's own options, come from. */
export const DEFAULT_LISTENER_SOURCE: SourceRef = { kind: "Gatehouse", namespace: "", name: "default" };

/** The plain-HTTP listener Ingress rules are served on (`--http-port`). */
export const DEFAULT_HTTP_LISTENER = "default/http";

/** The HTTPS listener Ingress `spec.tls` hosts are served on (`--https-port`). */
export const DEFAULT_HTTPS_LISTENER = "default/https";

/** `ingress/<ns>/<name>/rule/<i>/path/<j>`: one route per Ingress path. */
export function ingressPathRouteName(namespace: string, name: string, rule: number, path: number): string {
  return `ingress/${namespace}/${name}/rule/${rule}/path/${path}`;
}

/**
 * `ingress/<ns>/<name>/default-backend`. The same name is used on every virtual host the default backend
 * is placed on: it is one piece of configuration, so its metrics should add up under one name.
 */
export function ingressDefaultBackendRouteName(namespace: string, name: string): string {
  return `ingress/${namespace}/${name}/default-backend`;
}

/** The route of `--default-backend-service` (ingress-nginx's catch-all), on each host it is placed on. */
export function defaultBackendServiceRouteName(): string {
  return "default-backend-service";
}

/**
 * `<main route>/canary/<how>`: a route a canary Ingress adds beside the main Ingress's route it joins
 * (`how`: header, header-never, cookie, cookie-never). Under the main route's name, since it inherits
 * that route's settings and is reported with it.
 */
export function ingressCanaryRouteName(mainRoute: string, how: string): string {
  return `${mainRoute}/canary/${how}`;
}

/** The canary part of a route name, when it has one (`…/canary/<how>`). */
const CANARY_SUFFIX = /\/canary\/[a-z-]+$/;

/** Whether `routeName` is a canary route's (ingressCanaryRouteName). */
export function isCanaryRouteName(routeName: string): boolean {
  return CANARY_SUFFIX.test(routeName);
}

/** The main route a canary route joins (ingressCanaryRouteName undone); other names unchanged. */
export function mainRouteName(routeName: string): string {
  return routeName.replace(CANARY_SUFFIX, "");
}

/** The name of an Ingress path route (ingressPathRouteName), or of a canary route joining one. */
const INGRESS_PATH_ROUTE = /^ingress\/[^/]+\/[^/]+\/rule\/\d+\/path\/\d+(?:\/canary\/[a-z-]+)?$/;

/** Whether `routeName` is an Ingress path's route or a canary route joining one (not a host edit's). */
export function isIngressPathRouteName(routeName: string): boolean {
  return INGRESS_PATH_ROUTE.test(routeName);
}

/**
 * `ingress/<ns>/<name>/<annotation>`: the one route a host-level annotation adds on each host it applies
 * to (`app-root`, `from-to-www`); the same name on every host, as the default backend's.
 */
export function ingressHostRouteName(
  namespace: string,
  name: string,
  annotation: "app-root" | "from-to-www",
): string {
  return `ingress/${namespace}/${name}/${annotation}`;
}

/** The passthrough listener Ingress `ssl-passthrough` hosts are served on (the HTTPS port, shared). */
export const DEFAULT_PASSTHROUGH_LISTENER = "default/https-passthrough";

/** `ingress/<ns>/<name>/ssl-passthrough/<host>`: one SNI route per passed-through host. */
export function ingressPassthroughRouteName(namespace: string, name: string, host: string): string {
  return `ingress/${namespace}/${name}/ssl-passthrough/${host}`;
}

/** `httproute/<ns>/<name>`: the prefix of every route an HTTPRoute makes. */
export function httpRouteName(namespace: string, name: string): string {
  return `httproute/${namespace}/${name}`;
}

/** `grpcroute/<ns>/<name>`: the prefix of every route a GRPCRoute makes (rules and matches as HTTPRoute's). */
export function grpcRouteName(namespace: string, name: string): string {
  return `grpcroute/${namespace}/${name}`;
}

/** `httproute/<ns>/<name>/rule/<i>/match/<j>`: one route per HTTPRoute rule match. */
export function httpRouteMatchName(routeName: string, rule: number, match: number): string {
  return `${routeName}/rule/${rule}/match/${match}`;
}

/** `listenerset/<ns>/<name>/<listener>`: a ListenerSet's listener, bound on its parent Gateway's address. */
export function listenerSetListenerName(namespace: string, name: string, listener: string): string {
  return `listenerset/${namespace}/${name}/${listener}`;
}

/** `udproute/<ns>/<name>`: one datagram route per UDPRoute. */
export function udpRouteName(namespace: string, name: string): string {
  return `udproute/${namespace}/${name}`;
}

/** `tcproute/<ns>/<name>`: one stream route per TCPRoute. */
export function tcpRouteName(namespace: string, name: string): string {
  return `tcproute/${namespace}/${name}`;
}

/** `tlsroute/<ns>/<name>`: one passthrough route per TLSRoute. */
export function tlsRouteName(namespace: string, name: string): string {
  return `tlsroute/${namespace}/${name}`;
}

/** `gateway/<ns>/<name>/<listener>`: one model listener per Gateway listener. */
export function gatewayListenerName(namespace: string, gateway: string, listener: string): string {
  return `gateway/${namespace}/${gateway}/${listener}`;
}

/** The Gateway listener (section) name of a model listener of Gateway `<ns>/<gateway>`, else undefined. */
export function gatewayListenerSection(
  listenerName: string,
  namespace: string,
  gateway: string,
): string | undefined {
  const prefix = `gateway/${namespace}/${gateway}/`;
  return listenerName.startsWith(prefix) ? listenerName.slice(prefix.length) : undefined;
}

/** `ratelimitpolicy/<ns>/<name>`: a RateLimitPolicy's metric label, log name and shared bucket. */
export function rateLimitPolicyName(namespace: string, name: string): string {
  return `ratelimitpolicy/${namespace}/${name}`;
}

/** `ingress/<ns>/<name>`: the limit an Ingress's `limit-*` annotations make (see rateLimitPolicyName). */
export function ingressRateLimitName(namespace: string, name: string): string {
  return `ingress/${namespace}/${name}`;
}

/** `wafpolicy/<ns>/<name>`: a WAFPolicy's log name (docs/waf.md). */
export function wafPolicyName(namespace: string, name: string): string {
  return `wafpolicy/${namespace}/${name}`;
}

/** `ingress/<ns>/<name>`: the WAF an Ingress's ModSecurity annotations make (see wafPolicyName). */
export function ingressWafName(namespace: string, name: string): string {
  return `ingress/${namespace}/${name}`;
}

/** `ingress/<ns>/<name>`: the zone an Ingress's `limit-connections` counts each client in (one per Ingress). */
export function ingressConnectionZoneName(namespace: string, name: string): string {
  return `ingress/${namespace}/${name}`;
}

/**
 * `<ns>/<service>:<port>` with the Service port number. When the port cannot be resolved to a number
 * (unknown Service or port name) the requested name stands in, so distinct broken references stay distinct.
 */
export function backendId(
  namespace: string,
  service: string,
  port: number | string,
  protocol?: "UDP",
): string {
  // A Service may have a TCP and a UDP port of one number (DNS): a UDP backend is its own.
  return `${namespace}/${service}:${port}${protocol === "UDP" ? "/udp" : ""}`;
}

/** `<backend id>/h2c`: a Service port a GRPCRoute names without appProtocol `kubernetes.io/h2c`, spoken
 * to with h2c all the same (gRPC has no HTTP/1.1 form), apart from the HTTP/1.1 backend of that port. */
export function h2cBackendId(id: string): string {
  return `${id}/h2c`;
}

/** `<backend id>@cluster-ip`: a backend's Service cluster IP as its one endpoint (`service-upstream`). */
export function clusterIPBackendId(id: string): string {
  return `${id}@cluster-ip`;
}

/**
 * `<backend id>/tls`: a backend spoken to over TLS as a BackendTLSPolicy says, apart from the cleartext
 * backend of that Service port (which an Ingress or a TCPRoute may still use). `…/tls@gateway/<ns>/<name>`:
 * the same for the routes of a Gateway with a backend client certificate (`spec.tls.backend`), so
 * Gateways that present different certificates (or none) never share a connection pool.
 */
export function backendTLSId(id: string, clientCertificateOf?: { namespace: string; name: string }): string {
  const of = clientCertificateOf
    ? `@gateway/${clientCertificateOf.namespace}/${clientCertificateOf.name}`
    : "";
  return `${id}/tls${of}`;
}

/**
 * `<backend id>/tls/ingress/<ns>/<name>`: a Service port an Ingress speaks TLS to (ingress-nginx
 * `backend-protocol: HTTPS|GRPCS|AUTO_HTTP`), with that Ingress's own `proxy-ssl-*` settings (its CA, its
 * name, its client certificate), apart from the cleartext backend other routes of that port use.
 */
export function ingressTLSBackendId(id: string, namespace: string, name: string): string {
  return `${id}/tls/ingress/${namespace}/${name}`;
}

/**
 * `<backend id>/policy/<ns>/<name>[+<ns>/<name>…]`: a Service port as the routes of an HTTPRoute or a
 * Gateway reach it, with what their BackendTrafficPolicies set (the policies that decide some field
 * group, most specific first). Routes reached through the same policies share it (and its health state,
 * breaker counts); other routes of the port keep the plain backend.
 */
export function trafficPolicyBackendId(
  id: string,
  policies: readonly { readonly namespace: string; readonly name: string }[],
): string {
  return `${id}/policy/${policies.map((p) => `${p.namespace}/${p.name}`).join("+")}`;
}
