/**
 * The peers section's HAProxy and Caddy configurations (peers.ts), written from the bench's route set
 * (routes.ts) so every peer routes the same hosts and path prefixes to the same backend, keeps its
 * upstream connections alive, logs nothing and, over TLS, serves the same certificate with the same TLS
 * 1.2 suites as nginx and Gatehouse (tls.ts). docs/performance.md explains each choice.
 */
import type { RouteSet } from "./routes.ts";
import { BENCH_TLS12_CIPHERS, type BenchCertificate } from "./tls.ts";

export interface PeerOptions {
  readonly port: number;
  readonly upstreamPort: number;
  /** HAProxy's `nbthread`, Caddy's GOMAXPROCS (set by the caller), nginx's `worker_processes`. */
  readonly workers: number;
}

/**
 * HAProxy's host+path map: one line per route, `Host` + prefix → backend, looked up with `map_beg` on
 * `base` (the Host field followed by the path), the longest prefix winning. Every route names the one
 * backend, as every bench route names the one Service.
 */
export function haproxyMap(set: RouteSet, backend = "app"): string {
  return set.hosts.flatMap((h) => set.paths.map((p) => `${h}${p} ${backend}\n`)).join("");
}

/**
 * HAProxy with the map above. `http-reuse always` shares idle upstream connections between client
 * connections, as nginx's `keepalive` pool does; `option forwardfor` adds X-Forwarded-For as the nginx
 * row does; no `log` line, so nothing is logged. With `tls`: `crt` is the certificate and key in one PEM
 * file (HAProxy reads them so), HTTP/1.1 over ALPN, TLS 1.2 and 1.3, the TLS 1.2 suites nginx gets,
 * session tickets (HAProxy's default) and no server-side session cache, as nginx is set.
 */
export function haproxyConf(
  opts: PeerOptions & { readonly mapFile: string; readonly tls?: { readonly pemFile: string } },
): string {
  const tls = opts.tls;
  return `global
  nbthread ${opts.workers}
  maxconn 8192
${
  tls === undefined
    ? ""
    : `  ssl-default-bind-ciphers ${BENCH_TLS12_CIPHERS}
  ssl-default-bind-options ssl-min-ver TLSv1.2
  tune.ssl.cachesize 0
`
}
defaults
  mode http
  option http-keep-alive
  option forwardfor
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 75s

frontend bench
  bind 127.0.0.1:${opts.port}${tls === undefined ? "" : ` ssl crt ${tls.pemFile} alpn http/1.1`}
  use_backend %[base,map_beg(${opts.mapFile})]
  default_backend not_found

backend app
  http-reuse always
  server backend 127.0.0.1:${opts.upstreamPort}

backend not_found
  http-request return status 404
`;
}

/** Go's names of the TLS 1.2 suites in BENCH_TLS12_CIPHERS (OpenSSL's names), for Caddy. */
const goCipherNames: Readonly<Record<string, string>> = {
  "ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  "ECDHE-RSA-CHACHA20-POLY1305": "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
};

/** BENCH_TLS12_CIPHERS in Go's names; throws on a suite without one, rather than offer fewer. */
export function goCipherSuites(openssl: string = BENCH_TLS12_CIPHERS): string[] {
  return openssl.split(":").map((name) => {
    const go = goCipherNames[name];
    if (go === undefined)
      throw new Error(`no Go name for the TLS 1.2 suite ${name}: add it to peer-configs.ts`);
    return go;
  });
}

/**
 * Caddy's JSON configuration (what a Caddyfile with one site block per host adapts to): one route per
 * host matching its `host`, with a subroute of one `path` matcher per prefix (`/pN` and `/pN/*`, the
 * Prefix semantics) handled by `reverse_proxy`. Caddy's HTTP transport keeps upstream connections alive
 * by default; its idle pool per upstream is set to nginx's `keepalive 128`. No access log (Caddy logs
 * requests only when a server asks), the process log at ERROR, no admin endpoint, no automatic HTTPS,
 * HTTP/1.1 only. With `tls`: the certificate loaded from its files and chosen for every connection
 * (wrk's SNI is the address), TLS 1.2 and 1.3, the TLS 1.2 suites nginx gets; TLS 1.3 suites are Go's,
 * not configurable, all AEAD.
 */
export function caddyConfig(
  set: RouteSet,
  opts: PeerOptions & { readonly tls?: Pick<BenchCertificate, "certFile" | "keyFile"> },
): unknown {
  const proxy = {
    handler: "reverse_proxy",
    upstreams: [{ dial: `127.0.0.1:${opts.upstreamPort}` }],
    transport: { protocol: "http", keep_alive: { max_idle_conns_per_host: 128 } },
  };
  const notFound = { handle: [{ handler: "static_response", status_code: 404 }] };
  const routes = set.hosts.map((host) => ({
    match: [{ host: [host] }],
    handle: [
      {
        handler: "subroute",
        routes: [...set.paths.map((p) => ({ match: [{ path: [p, `${p}/*`] }], handle: [proxy] })), notFound],
      },
    ],
    terminal: true,
  }));
  const tls = opts.tls;
  return {
    admin: { disabled: true, config: { persist: false } },
    logging: { logs: { default: { level: "ERROR" } } },
    apps: {
      http: {
        // Stop at once at the end of a run instead of waiting for clients to leave.
        grace_period: "1s",
        servers: {
          bench: {
            listen: [`127.0.0.1:${opts.port}`],
            protocols: ["h1"],
            automatic_https: { disable: true },
            routes: [...routes, notFound],
            ...(tls === undefined
              ? {}
              : {
                  tls_connection_policies: [
                    {
                      certificate_selection: { any_tag: ["bench"] },
                      protocol_min: "tls1.2",
                      cipher_suites: goCipherSuites(),
                      alpn: ["http/1.1"],
                    },
                  ],
                }),
          },
        },
      },
      ...(tls === undefined
        ? {}
        : {
            tls: {
              certificates: {
                load_files: [{ certificate: tls.certFile, key: tls.keyFile, tags: ["bench"] }],
              },
            },
          }),
    },
  };
}
