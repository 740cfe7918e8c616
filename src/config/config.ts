import { parseArgs } from "node:util";
import { z } from "zod";
import { customHeaderNameProblem } from "../model/http-syntax.ts";
import { AUTH_VARIABLES } from "../model/location-template.ts";
import { lineFormatOf } from "../observability/access-log/access-log.ts";
import type { ProxyProtocolListeners } from "../proxy/client/proxy-preamble.ts";
import { proxyProtocolRefusal } from "../proxy/listeners/front-settings.ts";
import { parseCidr } from "../ratelimit/cidr.ts";
import { parseRedisUrl } from "../ratelimit/redis-url.ts";
import { forbiddenResponseHeader, templateProblem } from "../translate/ingress/access/external-auth.ts";
import { DEFAULT_COMPRESSION_TYPES } from "../translate/policies/compression-spec.ts";
import { defaultsFlags } from "./defaults-flags.ts";

/**
 * Flags of `gatehouse serve`. Every flag can also come from `GATEHOUSE_<NAME>` in the environment
 * (`--http-port` ↔ `GATEHOUSE_HTTP_PORT`); a flag given on the command line wins over the environment.
 * Bad values fail fast with a message naming the flag, before anything starts.
 */
const port = z.coerce.number().int().min(0).max(65535);
const bool = z.union([
  z.boolean(),
  z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1"),
]);

/** CIDRs, comma-separated (empty: none). */
const cidrList = z
  .string()
  .default("")
  .transform((v) =>
    v
      .split(",")
      .map((c) => c.trim())
      .filter((c) => c !== ""),
  )
  .superRefine((cidrs, ctx) => {
    for (const c of cidrs)
      if (parseCidr(c) === undefined) ctx.addIssue({ code: "custom", message: `"${c}" is not a CIDR` });
  });

const serveFlags = z
  .object({
    dir: z.string().min(1).optional(),
    "session-key-file": z.string().min(1).optional(), // signs timed session tokens (session-keys.ts)
    kube: bool.default(false),
    kubeconfig: z.string().optional(),
    /** --kube: the Service (`namespace/name`) whose addresses go into Ingress and Gateway status. */
    "publish-service": z
      .string()
      .regex(/^[a-z0-9.-]+\/[a-z0-9.-]+$/, "must be namespace/name")
      .optional(),
    /** --kube: addresses (comma-separated IPs or host names) to report instead of the Service's. */
    "status-address": z.string().optional(),
    /** --kube: Gateway listener port P is served on P + this (pods run non-root; 0: on P itself). */
    "gateway-port-offset": z.coerce.number().int().min(0).max(60_000).default(0),
    /** --kube: the leader keeps one Service of this type per Gateway (beside `--publish-service`, same
     * selector) mapping listener ports to their internal ports; `none`: no managed Services. */
    "gateway-services": z.enum(["none", "LoadBalancer", "NodePort", "ClusterIP"]).default("none"),
    /** --kube: never write to the API server (no status, no Lease): a read-only replica. */
    "read-only": bool.default(false),
    /** --kube: where the leader-election Lease lives (the Deployment sets the pod's namespace). */
    "leader-election-namespace": z.string().min(1).default("gatehouse-system"),
    "leader-election-name": z.string().min(1).default("gatehouse-leader"),
    /** --kube: the Lease duration: a killed leader is replaced within it (candidates read every tenth of it). */
    "lease-duration-ms": z.coerce.number().int().min(1000).default(15_000),
    "http-port": port.default(8080),
    "https-port": port.default(8443),
    ...defaultsFlags,
    /** ingress-nginx `ssl-redirect` default: plain-HTTP requests to Ingress hosts with TLS get 308 to https. */
    "ssl-redirect": bool.default(true),
    /** HTTPS listeners also offer HTTP/2 (ALPN h2): on the raw front through its node:tls listener, on
     * `--front bun` through node:http2 (about half Bun.serve's throughput; docs/tls.md has the figures). */
    http2: bool.default(false),
    /** A TLS passthrough listener and an HTTPS listener may share an address and port (raw front): the
     * ClientHello's SNI picks passthrough or termination (ingress-nginx `--enable-ssl-passthrough`). */
    "enable-ssl-passthrough": bool.default(false),
    "admin-port": port.default(9090),
    /** Address of the admin listener; unset: `--bind`. Workers of `--workers` use 127.0.0.1. */
    "admin-bind": z.string().min(1).optional(),
    bind: z.string().min(1).default("0.0.0.0"),
    "ingress-class": z.string().min(1).default("gatehouse"),
    "ingress-controller": z.string().min(1).default("gatehouse.dev/ingress-controller"),
    "watch-ingress-without-class": bool.default(false),
    /** Serve Ingresses whose access-control annotations are not enforced (auth-*, source ranges, client
     * certificates, WAF), open, instead of answering 403 on their paths; the warning stays. */
    "allow-unenforced-annotations": bool.default(false),
    /** Response header names an Ingress's `custom-headers` ConfigMap may set, comma-separated (ingress-nginx's
     * `global-allowed-response-headers`); empty: none, so every such header is refused until listed. */
    "global-allowed-response-headers": z
      .string()
      .default("")
      .transform((v) =>
        v
          .split(",")
          .map((n) => n.trim())
          .filter((n) => n !== ""),
      )
      .superRefine((names, ctx) => {
        for (const n of names) {
          const why = customHeaderNameProblem(n);
          if (why !== undefined) ctx.addIssue({ code: "custom", message: why });
        }
      }),
    /**
     * ingress-nginx's `global-auth-url`, `global-auth-signin` and `global-auth-response-headers`: forward
     * authentication for every Ingress without an auth-url of its own (`enable-global-auth: "false"` opts
     * one out; docs/ingress.md). Checked as the annotations are, refused here rather than per Ingress.
     */
    "global-auth-url": globalAuthTemplate(true),
    "global-auth-signin": globalAuthTemplate(true),
    "global-auth-response-headers": z
      .string()
      .optional()
      .superRefine((v, ctx) => {
        for (const n of (v ?? "").split(",").map((x) => x.trim()))
          if (n !== "" && (!/^[A-Za-z0-9_-]+$/.test(n) || forbiddenResponseHeader(n.toLowerCase())))
            ctx.addIssue({ code: "custom", message: `"${n}" cannot be copied onto a request` });
      }),
    /** GatewayClasses with this `spec.controllerName` are ours. */
    "gateway-controller": z.string().min(1).default("gatehouse.dev/gateway-controller"),
    /** Standalone mode: each Gateway without spec.addresses binds its own address from this CIDR. */
    "gateway-address-pool": z
      .string()
      .regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, "must be an IPv4 CIDR such as 127.0.1.0/24")
      .optional(),
    "upstream-timeout-ms": z.coerce.number().int().min(1).default(60_000),
    /** Longest silence between two reads of an upstream's response body (nginx `proxy_read_timeout`);
     * unset: `--upstream-timeout-ms`. */
    "upstream-read-timeout-ms": z.coerce.number().int().min(1).optional(),
    /** Longest time an upstream may take no request byte (nginx `proxy_send_timeout`); unset:
     * `--upstream-timeout-ms`. */
    "upstream-send-timeout-ms": z.coerce.number().int().min(1).optional(),
    /** Longest silence between two reads of a client's request body (nginx `client_body_timeout`). */
    "client-body-timeout-ms": z.coerce.number().int().min(1).default(60_000),
    /** TLS Passthrough and TCP connections with no byte either way for this long are closed (Envoy's TCP
     * proxy default, one hour); 0: never. */
    "stream-idle-timeout-ms": z.coerce.number().int().min(0).default(3_600_000),
    /** A UDP flow (one client's datagrams) with none either way for this long is closed (Envoy's UDP proxy
     * default, one minute); 0: never. */
    "udp-idle-timeout-ms": z.coerce.number().int().min(0).default(60_000),
    /** Request bodies with a Content-Length up to this size are read whole before an upstream connection
     * is taken (nginx `proxy_request_buffering`); 0: every body is streamed. */
    "request-buffer-bytes": z.coerce
      .number()
      .int()
      .min(0)
      .max(16 * 1024 * 1024)
      .default(64 * 1024),
    /** Keep request header fields whose name contains `_` (ingress-nginx `enable-underscores-in-headers`);
     * false: both fronts drop them, as nginx does, since CGI-style backends read `X_Forwarded_For` as
     * `X-Forwarded-For`. */
    "underscores-in-headers": bool.default(false),
    /** Request heads (request line, fields, blank line) past this size are answered 431, on both fronts
     * (Envoy's `max_request_headers_kb`; nginx's `large_client_header_buffers` 4 × 8 KB answers 400). */
    "max-request-header-bytes": z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(64 * 1024),
    /** Request heads with more field lines than this are answered 431 (Envoy's `max_headers_count`);
     * at most 198: Bun.serve refuses more whatever it is told. */
    "max-request-header-count": z.coerce.number().int().min(1).max(198).default(100),
    /** Response codings offered, most preferred first (`gzip`, `br`, `zstd`; comma-separated): ingress-nginx's
     * `use-gzip` / `enable-brotli`. Empty (the default, as there): no compression unless a
     * BackendTrafficPolicy asks for it (docs/compression.md). */
    compression: z
      .string()
      .default("")
      .transform((v, ctx) => {
        const codings = v
          .split(",")
          .map((c) => c.trim().toLowerCase())
          .filter((c) => c !== "" && c !== "none");
        const wrong = codings.find((c) => c !== "gzip" && c !== "br" && c !== "zstd");
        if (wrong !== undefined)
          ctx.addIssue({ code: "custom", message: `"${wrong}" is not gzip, br or zstd` });
        if (new Set(codings).size !== codings.length)
          ctx.addIssue({ code: "custom", message: "a coding is listed twice" });
        return codings as ("gzip" | "br" | "zstd")[];
      }),
    /** Media types compressed (ingress-nginx `gzip-types`; comma- or space-separated, `*` any, `text/*`). */
    "compression-types": z
      .string()
      .default(DEFAULT_COMPRESSION_TYPES.join(","))
      .transform((v, ctx) => {
        const types = v
          .split(/[\s,]+/)
          .map((t) => t.toLowerCase())
          .filter((t) => t !== "");
        for (const t of types)
          if (t !== "*" && !/^[a-z0-9!#$&^_.+-]+\/(\*|[a-z0-9!#$&^_.+-]+)$/.test(t))
            ctx.addIssue({
              code: "custom",
              message: `"${t}" is not a media type (type/subtype, type/* or *)`,
            });
        return types;
      }),
    /** Responses with a Content-Length below this are not compressed (ingress-nginx `gzip-min-length`). */
    "compression-min-bytes": z.coerce
      .number()
      .int()
      .min(0)
      .max(1024 ** 3)
      .default(256),
    /** gzip level, 1–9 (ingress-nginx `gzip-level`, default 1). */
    "gzip-level": z.coerce.number().int().min(1).max(9).default(1),
    /** Brotli quality, 0–11 (ingress-nginx `brotli-level`, default 4). */
    "brotli-level": z.coerce.number().int().min(0).max(11).default(4),
    /** zstd level, 1–22 (default 3, zstd's own). */
    "zstd-level": z.coerce.number().int().min(1).max(22).default(3),
    /** Client connections open at once per serving process (raw front); 0: no cap. */
    "max-connections": z.coerce.number().int().min(0).default(16_384),
    /** Client connections open at once from one peer address (raw front); 0: no cap. Behind a load
     * balancer every client shares its address: leave it off there. */
    "max-connections-per-peer": z.coerce.number().int().min(0).default(0),
    /** Proxies (CIDRs, comma-separated) whose X-Forwarded-For names the client, walked right to left
     * (ingress-nginx `proxy-real-ip-cidr` with `use-forwarded-headers`); empty: every peer is the client. */
    "trusted-proxies": cidrList,
    /** Listeners that read a PROXY header (v1 or v2) first, as cloud load balancers send it: `none`,
     * `all` (every HTTP and HTTPS listener) or listener ports, comma-separated. Raw front only. */
    "proxy-protocol": z
      .string()
      .default("none")
      .transform((v, ctx): ProxyProtocolListeners => {
        const t = v.trim();
        if (t === "none" || t === "all") return t;
        const ports = t.split(",").map((p) => p.trim());
        if (ports.every((p) => /^[1-9][0-9]{0,4}$/.test(p) && Number(p) <= 65535)) return ports.map(Number);
        ctx.addIssue({ code: "custom", message: "must be none, all, or listener ports (comma-separated)" });
        return z.NEVER;
      }),
    /** Peers (CIDRs, comma-separated) that may send a PROXY header; empty: those of --trusted-proxies.
     * Name the L4 balancer here, not in --trusted-proxies, when it also reaches listeners without PROXY. */
    "proxy-protocol-from": cidrList,
    "debounce-ms": z.coerce.number().int().min(0).default(100),
    /** What serves HTTP and HTTPS listeners: `raw` (own HTTP/1.1 on raw sockets and node:tls,
     * src/proxy/raw-front/) or `bun` (Bun.serve). */
    front: z.enum(["raw", "bun"]).default("raw"),
    /** Serving processes sharing the listeners (SO_REUSEPORT); 0 = one per CPU core. */
    workers: z.coerce.number().int().min(0).max(256).default(0),
    /** On SIGTERM: how long to keep accepting (readiness already false) so load balancers notice. */
    "drain-delay-ms": z.coerce.number().int().min(0).default(5_000),
    /** Then how long in-flight requests may take before connections are closed anyway. */
    "drain-timeout-ms": z.coerce.number().int().min(0).default(30_000),
    /** Share of requests written to the access log: 0 = off, 1 = every request. */
    "access-log-sample": z.coerce.number().min(0).max(1).default(1),
    /** The JSON access line's fields, comma-separated (docs/observability.md); unset: the default set. */
    "access-log-fields": z.string().optional(),
    /** A text access line in nginx `log_format` syntax instead (docs/observability.md). */
    "access-log-format": z.string().optional(),
    /** How --access-log-format escapes values: nginx's `default` (`\xHH`) or `json`. */
    "access-log-escape": z.enum(["default", "json"]).optional(),
    "log-level": z.enum(["debug", "info", "warn", "error"]).default("info"),
    /** OTLP/HTTP collector for traces (docs/observability.md): a URL with no path gets `/v1/traces`, one
     * with a path is used as given. Unset: no tracing, no trace headers touched. */
    "otlp-endpoint": z
      .string()
      .transform((v, ctx) => {
        const url = otlpTracesUrl(v);
        if (url === undefined)
          ctx.addIssue({ code: "custom", message: "must be an http:// or https:// URL" });
        return url ?? z.NEVER;
      })
      .optional(),
    /** Share of requests without a valid `traceparent` that start a sampled trace, 0…1 (a caller's own
     * sampled flag is always honoured); 0.01 is ingress-nginx's `otel-sampler-ratio` default. */
    "trace-sample-rate": z.coerce.number().min(0).max(1).default(0.01),
    /** Shared rate limit counters (redis://, rediss://, redis-sentinel://, redis-cluster://; see
     * docs/ratelimit.md). Unset: each process counts in memory on its own. */
    "redis-url": z
      .string()
      .superRefine((url, ctx) => {
        const target = parseRedisUrl(url);
        if ("error" in target) ctx.addIssue({ code: "custom", message: target.error });
      })
      .optional(),
    /** Longest a request waits for Redis before the policy's failure mode applies. */
    "redis-timeout-ms": z.coerce.number().int().min(1).max(10_000).default(50),
    /** WAF transactions sent to the engine's worker and not yet answered, per serving process; one more
     * is answered 503 with Retry-After (docs/waf.md). */
    "waf-queue-limit": z.coerce.number().int().min(1).max(65_536).default(256),
  })
  .strict();

export const serveConfigSchema = serveFlags
  .refine((c) => c.dir !== undefined || c.kube, { message: "give --dir DIR (folder of YAML) or --kube" })
  .refine((c) => !(c.dir !== undefined && c.kube), { message: "--dir and --kube exclude each other" })
  // A listener that expects PROXY headers on a front that cannot read them would serve no one.
  .superRefine((c, ctx) => {
    const why = proxyProtocolRefusal(
      {
        proxyProtocol: c["proxy-protocol"],
        trustedProxies: c["trusted-proxies"],
        proxyProtocolFrom: c["proxy-protocol-from"],
      },
      c.front,
    );
    if (why !== undefined) ctx.addIssue({ code: "custom", message: why });
  })
  // The admin endpoints (metrics, the model dump) must never be reachable on a traffic port; 0 asks
  // the kernel for a free port, which cannot be one of them.
  .refine(
    (c) =>
      c["admin-port"] === 0 || (c["admin-port"] !== c["http-port"] && c["admin-port"] !== c["https-port"]),
    {
      path: ["admin-port"],
      message: "must differ from --http-port and --https-port (admin is never on a traffic port)",
    },
  )
  // The access-log format is parsed here too, so a bad one stops the start before anything listens.
  .superRefine((c, ctx) => {
    const format = lineFormatOf({
      fields: c["access-log-fields"],
      template: c["access-log-format"],
      escape: c["access-log-escape"],
    });
    if ("error" in format) ctx.addIssue({ code: "custom", message: format.error });
  });
export type ServeConfig = z.infer<typeof serveConfigSchema>;

const booleanFlags = new Set([
  "kube",
  "watch-ingress-without-class",
  "allow-unenforced-annotations",
  "read-only",
]);

/** The traces URL for `--otlp-endpoint` (as OTEL_EXPORTER_OTLP_ENDPOINT takes a collector's base). */
function otlpTracesUrl(endpoint: string): string | undefined {
  if (!URL.canParse(endpoint)) return undefined;
  const url = new URL(endpoint);
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return undefined;
  if (url.pathname === "/") url.pathname = "/v1/traces";
  return url.href;
}

/** An absolute http(s) URL that may hold nginx variables (the auth-url annotation's syntax). */
function globalAuthTemplate(url: boolean) {
  return z
    .string()
    .min(1)
    .optional()
    .superRefine((v, ctx) => {
      const why = v === undefined ? undefined : templateProblem(v, AUTH_VARIABLES, url);
      if (why !== undefined) ctx.addIssue({ code: "custom", message: why });
    });
}

/** The CLI options table derived from the schema, so flags and schema cannot drift apart. */
function optionsTable() {
  return Object.fromEntries(
    Object.keys(serveFlags.shape).map((k) => [
      k,
      { type: booleanFlags.has(k) ? ("boolean" as const) : ("string" as const) },
    ]),
  );
}

/** Environment variable name for a flag: `http-port` → `GATEHOUSE_HTTP_PORT`. */
export function envName(flag: string): string {
  return `GATEHOUSE_${flag.toUpperCase().replaceAll("-", "_")}`;
}

export class ConfigError extends Error {}

/** Parse flags + environment into a validated config; throws ConfigError with a readable message. */
export function parseServeConfig(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): ServeConfig {
  const table = optionsTable();
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: [...argv], options: table, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const merged: Record<string, unknown> = {};
  for (const key of Object.keys(table)) {
    const fromEnv = env[envName(key)];
    if (values[key] !== undefined) merged[key] = values[key];
    else if (fromEnv !== undefined && fromEnv !== "") merged[key] = fromEnv;
  }
  // A rate with nothing to send spans to would sample nothing: refused rather than ignored.
  if (merged["trace-sample-rate"] !== undefined && merged["otlp-endpoint"] === undefined)
    throw new ConfigError("--trace-sample-rate: needs --otlp-endpoint (tracing is off without one)");
  const result = serveConfigSchema.safeParse(merged);
  if (!result.success) {
    const msg = result.error.issues
      .map((i) => (i.path.length ? `--${i.path.join(".")}: ${i.message}` : i.message))
      .join("; ");
    throw new ConfigError(msg);
  }
  return result.data;
}
