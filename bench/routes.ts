/**
 * The benchmark route set, written twice from one description: as Kubernetes manifests for Gatehouse and
 * as an equivalent nginx.conf, so both proxies route the same hosts and paths to the same upstream.
 */
import { stringify } from "yaml";
import { type BenchCertificate, nginxTlsDirectives } from "./tls.ts";
import { classesAndGateway } from "./workload.ts";

export interface RouteSet {
  readonly hosts: readonly string[];
  readonly paths: readonly string[];
}

export function routeSet(hostCount: number, pathsPerHost: number): RouteSet {
  return {
    hosts: Array.from({ length: hostCount }, (_, i) => `host-${i}.bench.test`),
    paths: Array.from({ length: pathsPerHost }, (_, i) => `/p${i}`),
  };
}

/**
 * Even hosts as Ingresses, odd hosts as HTTPRoutes on a Gateway sharing the Ingress socket (`httpPort`),
 * one Prefix path per route; one Service + its EndpointSlice behind all of them. With `tlsSecret` (a
 * kubernetes.io/tls Secret in namespace `bench`), each Ingress names it in `spec.tls` for its host, so the
 * Ingress hosts are served on `--https-port` too (the HTTPRoutes stay on the HTTP listener).
 */
export function manifests(set: RouteSet, upstreamPort: number, httpPort: number, tlsSecret?: string): string {
  const docs: unknown[] = [
    ...classesAndGateway("bench", "bench", httpPort),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "backend", namespace: "bench" },
      spec: { ports: [{ name: "http", port: 80, targetPort: upstreamPort }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "backend-1",
        namespace: "bench",
        labels: { "kubernetes.io/service-name": "backend" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "http", port: upstreamPort }],
    },
  ];
  set.hosts.forEach((host, i) => {
    if (i % 2 === 1) {
      docs.push({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: `bench-${i}`, namespace: "bench" },
        spec: {
          parentRefs: [{ name: "bench" }],
          hostnames: [host],
          rules: set.paths.map((path) => ({
            matches: [{ path: { type: "PathPrefix", value: path } }],
            backendRefs: [{ name: "backend", port: 80 }],
          })),
        },
      });
      return;
    }
    docs.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: `bench-${i}`, namespace: "bench" },
      spec: {
        ingressClassName: "gatehouse",
        ...(tlsSecret === undefined ? {} : { tls: [{ hosts: [host], secretName: tlsSecret }] }),
        rules: [
          {
            host,
            http: {
              paths: set.paths.map((path) => ({
                path,
                pathType: "Prefix",
                backend: { service: { name: "backend", port: { number: 80 } } },
              })),
            },
          },
        ],
      },
    });
  });
  return docs.map((d) => stringify(d)).join("---\n");
}

/**
 * The start of every bench nginx.conf: `workers` workers, its files under `prefix`, no access log; the
 * `http {` block is left open for the caller's directives.
 */
export function nginxPreamble(workers: number, prefix: string): string {
  return `worker_processes ${workers};
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
`;
}

/**
 * nginx ends an HTTP/2 connection with GOAWAY after `keepalive_requests` (1000) and h2load does not
 * reconnect: streams in flight are refused and the connection measures nothing more. Gatehouse sets no
 * such limit.
 */
const H2_REQUESTS = "  keepalive_requests 10000000;\n";

/**
 * nginx with the same routes, upstream keep-alive, no access log: the configuration a tuned ingress uses.
 * With `tls`, every server listens with `ssl` on `port` instead (HTTP/1.1 only, as Gatehouse's default).
 */
export function nginxConf(
  set: RouteSet,
  opts: {
    port: number;
    upstreamPort: number;
    workers: number;
    prefix: string;
    tls?: Pick<BenchCertificate, "certFile" | "keyFile">;
    /** With `tls`: ALPN offers `h2` too (nginx 1.22's `listen … http2`). */
    http2?: boolean;
  },
) {
  const listen = `listen 127.0.0.1:${opts.port}${opts.tls === undefined ? "" : " ssl"}${opts.http2 === true ? " http2" : ""}`;
  const locations = set.paths
    .map(
      (p) => `      location ${p} {
        proxy_pass http://backend;
      }`,
    )
    .join("\n");
  const servers = set.hosts
    .map(
      (h) => `    server {
      ${listen};
      server_name ${h};
${locations}
    }`,
    )
    .join("\n");
  return `${nginxPreamble(opts.workers, opts.prefix)}  server_names_hash_bucket_size 128;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host $host;
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
${opts.tls === undefined ? "" : nginxTlsDirectives(opts.tls)}${opts.http2 === true ? H2_REQUESTS : ""}  upstream backend {
    server 127.0.0.1:${opts.upstreamPort};
    keepalive 128;
  }
  server {
    ${listen} default_server;
    return 404;
  }
${servers}
}
`;
}

/**
 * The fields a desktop browser sends with a page request (Chrome's, values shortened), beside Host: what
 * a gateway parses per request in front of a web application, against the bench's Host-only requests.
 */
export const BROWSER_FIELDS: Readonly<Record<string, string>> = {
  "Cache-Control": "max-age=0",
  "Sec-Ch-Ua": '"Chromium";v="131", "Not_A Brand";v="24"',
  "Sec-Ch-Ua-Mobile": "?0",
  "Sec-Ch-Ua-Platform": '"Linux"',
  "Upgrade-Insecure-Requests": "1",
  "User-Agent":
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
  Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
  "Sec-Fetch-Site": "none",
  "Sec-Fetch-Mode": "navigate",
  "Sec-Fetch-User": "?1",
  "Sec-Fetch-Dest": "document",
  "Accept-Encoding": "gzip, deflate, br, zstd",
  "Accept-Language": "en-US,en;q=0.9",
  Cookie: "session=5f2b9c1e8a7d4b3c; theme=dark",
};

/**
 * A wrk Lua script that cycles through every host × path, so lookups are not all the same route; with
 * `fields`, every request carries them too.
 */
export function wrkScript(set: RouteSet, fields: Readonly<Record<string, string>> = {}): string {
  const hosts = set.hosts.map((h) => `"${h}"`).join(",");
  const paths = set.paths.map((p) => `"${p}/x"`).join(",");
  const extra = Object.entries(fields)
    .map(([k, v]) => `h[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join("\n  ");
  return `local hosts = {${hosts}}
local paths = {${paths}}
local i = 0
request = function()
  i = i + 1
  local h = { ["Host"] = hosts[(i % #hosts) + 1] }
  ${extra}
  local p = paths[(math.floor(i / #hosts) % #paths) + 1]
  return wrk.format("GET", p, h)
end
`;
}
