/**
 * A realistic route set of any size, as Kubernetes objects, for the matcher, config-change and memory
 * sections: Ingresses and HTTPRoutes on one socket, many exact hosts, wildcard hosts, one big host that
 * collects a tenth of all routes (the "everything under api.example.com" Ingress people really write),
 * Exact and Prefix paths, some header matches and some regular expressions. Each route comes with a
 * request that should reach it, so lookups can be checked, not only timed.
 */
import { stringify } from "yaml";
import type { ResourceSnapshot } from "../src/sources/snapshot.ts";

export interface WorkloadRequest {
  readonly host: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface Workload {
  /** Kubernetes objects in a stable order (GatewayClass, Gateway, Service, … then routes). */
  readonly objects: readonly Record<string, unknown>[];
  /** One request per generated route (hits), plus about 10% that match no route (misses). */
  readonly requests: readonly WorkloadRequest[];
  /** Routes generated (a model may hold a few more: Ingress default backends, none here). */
  readonly routes: number;
}

const ns = "bench";
const backend = { name: "web", port: 80 };

/**
 * The IngressClass and GatewayClass of our controllers, and Gateway `name` in `namespace` with one HTTP
 * listener on the Ingress port (`--http-port`): both kinds then share one socket.
 */
export function classesAndGateway(
  namespace: string,
  name: string,
  httpPort: number,
): Record<string, unknown>[] {
  return [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "gatehouse" },
      spec: { controller: "gatehouse.dev/ingress-controller" },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "gatehouse" },
      spec: { controllerName: "gatehouse.dev/gateway-controller" },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name, namespace },
      spec: {
        gatewayClassName: "gatehouse",
        listeners: [{ name: "http", port: httpPort, protocol: "HTTP" }],
      },
    },
  ];
}

/** The shared objects: classes, one Gateway on the Ingress socket, one Service with its endpoints. */
function baseObjects(httpPort: number, upstreamPort: number): Record<string, unknown>[] {
  return [
    ...classesAndGateway(ns, "gw", httpPort),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: backend.name, namespace: ns },
      spec: { ports: [{ name: "http", port: backend.port, targetPort: upstreamPort }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "web-1", namespace: ns, labels: { "kubernetes.io/service-name": backend.name } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "http", port: upstreamPort }],
    },
  ];
}

const ingressBackend = { service: { name: backend.name, port: { number: backend.port } } };
const routeBackend = [{ name: backend.name, port: backend.port }];

/** Ten routes of one kind; `u` is the unit's number. Kinds rotate A A A A B B B B C D. */
function unit(u: number, out: Record<string, unknown>[], reqs: WorkloadRequest[]): void {
  const kind = "AAAABBBBCD"[u % 10];
  if (kind === "A") {
    // Ingress, one exact host: 3 Exact + 7 Prefix.
    const host = `svc-${u}.example.com`;
    const paths = [
      ...[0, 1, 2].map((k) => ({ path: `/api/v${k}/items`, pathType: "Exact", req: `/api/v${k}/items` })),
      ...[0, 1, 2, 3, 4, 5, 6].map((k) => ({ path: `/p${k}`, pathType: "Prefix", req: `/p${k}/x/${u}` })),
    ];
    out.push(ingress(`ing-${u}`, host, paths));
    for (const p of paths) reqs.push({ host, path: p.req, headers: {} });
  } else if (kind === "B") {
    // HTTPRoute, one exact host: 6 prefixes, 2 exact, 1 header match, 1 regex.
    const host = `app-${u}.example.com`;
    const rules: Record<string, unknown>[] = [];
    for (let k = 0; k < 6; k++) {
      rules.push(rule({ path: { type: "PathPrefix", value: `/svc${k}` } }));
      reqs.push({ host, path: `/svc${k}/orders/${u}`, headers: {} });
    }
    for (let k = 0; k < 2; k++) {
      rules.push(rule({ path: { type: "Exact", value: `/svc${k}/health` } }));
      reqs.push({ host, path: `/svc${k}/health`, headers: {} });
    }
    rules.push(
      rule({
        path: { type: "PathPrefix", value: "/svc0" },
        headers: [{ type: "Exact", name: "x-version", value: "v2" }],
      }),
    );
    reqs.push({ host, path: "/svc0/orders", headers: { "x-version": "v2" } });
    rules.push(rule({ path: { type: "RegularExpression", value: "/items/[0-9]+" } }));
    reqs.push({ host, path: `/items/${u}`, headers: {} });
    out.push(httpRoute(`route-${u}`, [host], rules));
  } else if (kind === "C") {
    // HTTPRoute on a wildcard host: 10 prefixes.
    const rules = Array.from({ length: 10 }, (_, k) =>
      rule({ path: { type: "PathPrefix", value: `/t${k}` } }),
    );
    out.push(httpRoute(`tenant-${u}`, [`*.tenant-${u}.example.com`], rules));
    for (let k = 0; k < 10; k++)
      reqs.push({ host: `shop${k}.tenant-${u}.example.com`, path: `/t${k}/cart`, headers: {} });
  } else {
    // Ingress adding 10 prefixes to the one big host.
    const paths = Array.from({ length: 10 }, (_, k) => ({
      path: `/d${u}-${k}`,
      pathType: "Prefix",
      req: `/d${u}-${k}/item`,
    }));
    out.push(ingress(`big-${u}`, "api.example.com", paths));
    for (const p of paths) reqs.push({ host: "api.example.com", path: p.req, headers: {} });
  }
}

function ingress(name: string, host: string, paths: { path: string; pathType: string }[]) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns },
    spec: {
      ingressClassName: "gatehouse",
      rules: [
        {
          host,
          http: {
            paths: paths.map((p) => ({ path: p.path, pathType: p.pathType, backend: ingressBackend })),
          },
        },
      ],
    },
  };
}

function rule(match: Record<string, unknown>) {
  return { matches: [match], backendRefs: routeBackend };
}

function httpRoute(name: string, hostnames: string[], rules: Record<string, unknown>[]) {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name, namespace: ns },
    spec: { parentRefs: [{ name: "gw" }], hostnames, rules },
  };
}

/** About `routes` routes (a multiple of 10), for a gateway on `httpPort` and a backend on `upstreamPort`. */
export function workload(routes: number, httpPort = 8080, upstreamPort = 9): Workload {
  const objects = baseObjects(httpPort, upstreamPort);
  const requests: WorkloadRequest[] = [];
  const units = Math.max(1, Math.round(routes / 10));
  for (let u = 0; u < units; u++) unit(u, objects, requests);
  const hits = requests.length;
  // Misses: an unknown host, and a known host with an unknown path.
  for (let i = 0; i < Math.ceil(hits / 20); i++) {
    requests.push({ host: `nowhere-${i}.example.org`, path: "/", headers: {} });
    requests.push({ host: `svc-${(i * 10) % (units * 10)}.example.com`, path: "/missing/x", headers: {} });
  }
  return { objects, requests, routes: hits };
}

const fields: Record<string, keyof ResourceSnapshot> = {
  IngressClass: "ingressClasses",
  Ingress: "ingresses",
  Service: "services",
  EndpointSlice: "endpointSlices",
  Secret: "secrets",
  GatewayClass: "gatewayClasses",
  Gateway: "gateways",
  HTTPRoute: "httpRoutes",
  AuthPolicy: "authPolicies",
  RateLimitPolicy: "rateLimitPolicies",
};

/**
 * The objects as a snapshot, without the YAML round trip (the matcher section builds 100k routes).
 * They are written well-formed here, which is what the source's schema check would pass.
 */
export function snapshotOf(objects: readonly Record<string, unknown>[]): ResourceSnapshot {
  const snap: Record<string, unknown[]> = {};
  for (const f of Object.values(fields)) snap[f] = [];
  snap.namespaces = [];
  snap.referenceGrants = [];
  for (const o of objects) {
    const f = fields[o.kind as string];
    if (f === undefined) throw new Error(`workload: no snapshot field for kind ${String(o.kind)}`);
    (snap[f] as unknown[]).push(o);
  }
  return snap as unknown as ResourceSnapshot;
}

/** The objects as multi-document YAML files of at most `perFile` objects each. */
export function yamlFiles(objects: readonly Record<string, unknown>[], perFile = 200): string[] {
  const files: string[] = [];
  for (let i = 0; i < objects.length; i += perFile)
    files.push(
      objects
        .slice(i, i + perFile)
        .map((o) => stringify(o))
        .join("---\n"),
    );
  return files;
}

/** Fisher–Yates with a seeded generator, so runs shuffle the same way. */
export function shuffled<T>(xs: readonly T[], seed = 1): T[] {
  const out = [...xs];
  let s = seed >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * A Service with one port (`port` → `targetPort`, its appProtocol when given) and its EndpointSlice on
 * 127.0.0.1: the bench's backends as the sources read them.
 */
export function localService(
  namespace: string,
  name: string,
  port: number,
  targetPort: number,
  appProtocol?: string,
): Record<string, unknown>[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { ports: [{ name: "p", port, targetPort, ...(appProtocol ? { appProtocol } : {}) }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${name}-1`, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "p", port: targetPort }],
    },
  ];
}

/** An Ingress `name` serving `host` `path` (Prefix) from `service` port 80. */
export function prefixIngress(
  namespace: string,
  name: string,
  host: string,
  path: string,
  service: string,
): Record<string, unknown> {
  const backend = { service: { name: service, port: { number: 80 } } };
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace },
    spec: {
      ingressClassName: "gatehouse",
      rules: [{ host, http: { paths: [{ path, pathType: "Prefix", backend }] } }],
    },
  };
}

/** An Ingress serving `host` `/ready` from `service` port 80: what a section's readiness probe asks. */
export function readyIngress(namespace: string, host: string, service: string): Record<string, unknown> {
  return prefixIngress(namespace, "ready", host, "/ready", service);
}
