/**
 * Prometheus metrics. prom-client does the registry and the text format; the per-request series are
 * accumulated in `RouteStatsTable` (plain arrays, no label hashing on the hot path) and read at scrape
 * time through collector objects. Every label value comes from configuration or a fixed set, never from
 * what a client sends, so memory is bounded by the configuration.
 */
import { X509Certificate } from "node:crypto";
import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from "prom-client";
import type { GatewayModel, Problem } from "../model/index.ts";
import { registerWafMetrics } from "../waf/decisions.ts";
import { latencyBuckets, noRoute, RouteStatsTable } from "./route-stats.ts";

/** One process's samples as `Registry.getMetricsAsJSON` gives them. */
export type PeerMetrics = MetricObjectWithValues<MetricValue<string>>[];

type Sample = { labels?: Record<string, string | number>; value: number; metricName?: string };

/** A metric whose samples are produced at scrape time (the shape prom-client's Registry formats). */
function collector(
  name: string,
  help: string,
  type: "counter" | "gauge" | "histogram",
  read: () => Sample[],
) {
  return {
    name,
    help,
    type,
    aggregator: "sum" as const,
    get: async () => ({ name, help, type, values: read(), aggregator: "sum" as const }),
  };
}

const classNames = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"];

/** A TLS Passthrough or TCP listener's counters (proxy/passthrough/pipe.ts StreamStats), by shape. */
type StreamCounters = {
  readonly routed: number;
  readonly refused: number;
  readonly upstreamFailed: number;
  readonly idleClosed: number;
  readonly evicted: number;
  readonly bytesToUpstream: number;
  readonly bytesToClient: number;
};

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly routes = new RouteStatsTable();
  private inflight: () => number = () => 0;
  private connections: () => number = () => 0;
  private streams: () => ReadonlyMap<string, StreamCounters> = () => new Map();
  private peers: (() => Promise<PeerMetrics[]>) | undefined;
  private readonly upstreamErrors = new Counter({
    name: "gatehouse_upstream_errors_total",
    help: "Failed forwarding attempts (each retry counts) by backend (namespace/service:port) and kind (connect: refused, reset or unreadable before response headers, 502; timeout: no response headers in time, 504; tls: a TLS backend's handshake failed or its certificate was refused, 502).",
    labelNames: ["backend", "kind"] as const,
    registers: [this.registry],
  });
  private readonly refusedConnections = new Counter({
    name: "gatehouse_connections_refused_total",
    help: "Client connections closed as they arrived because a cap was reached (raw front), by reason (total: --max-connections; per_peer: --max-connections-per-peer).",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  private readonly tlsHandshakeFailures = new Counter({
    name: "gatehouse_tls_handshake_failures_total",
    help: "TLS handshakes that failed on HTTPS listeners served by the raw front, by listener and reason (timeout, plain_http, protocol_version, alpn, client_certificate, client_gone, other).",
    labelNames: ["listener", "reason"] as const,
    registers: [this.registry],
  });
  private readonly droppedHeaderFields = new Counter({
    name: "gatehouse_request_header_fields_dropped_total",
    help: "Request header fields dropped because their name contains _ (--underscores-in-headers false, as nginx's underscores_in_headers off), by listener. On --front bun, repeated fields of one name count once.",
    labelNames: ["listener"] as const,
    registers: [this.registry],
  });
  private readonly mirrorCopies = new Counter({
    name: "gatehouse_mirror_requests_total",
    help: "Request copies for RequestMirror filters and mirror-target annotations, by mirror (backend id or scheme://host:port) and outcome (answered, failed, skipped_streamed_body: a body bigger than --request-buffer-bytes or chunked is not mirrored; skipped_busy: too many copies, or too many body bytes, already waiting on mirrors in the process).",
    labelNames: ["mirror", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly applies = new Counter({
    name: "gatehouse_config_applies_total",
    help: "Configuration snapshots translated and applied, by result.",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  private readonly applySeconds = new Histogram({
    name: "gatehouse_config_apply_duration_seconds",
    help: "Time from a new snapshot to the new route table serving.",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });
  private readonly problems = new Gauge({
    name: "gatehouse_translate_problems",
    help: "Problems found in the current configuration, by object kind, reason and severity.",
    labelNames: ["kind", "reason", "severity"] as const,
    // Every worker translates the same configuration: one copy, not the sum.
    aggregator: "first",
    registers: [this.registry],
  });
  private readonly certExpiry = new Gauge({
    name: "gatehouse_tls_certificate_expiry_timestamp_seconds",
    help: "Expiry (notAfter, Unix seconds) of each certificate served, by listener and source Secret.",
    labelNames: ["listener", "certificate"] as const,
    aggregator: "first",
    registers: [this.registry],
  });
  private readonly backendEndpoints = new Gauge({
    name: "gatehouse_backend_endpoints",
    help: "Endpoints each backend (namespace/service:port) sends traffic to: its ready ones, or its serving-but-terminating ones when none is ready. 0: its requests are answered 503.",
    labelNames: ["backend"] as const,
    aggregator: "first",
    registers: [this.registry],
  });
  readonly authFailures = new Counter({
    name: "gatehouse_auth_failures_total",
    help: "Requests refused by authentication or authorization, by reason.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  /**
   * Counted by the rate limiter in plain integers (a labelled prom-client inc on every request was a
   * measured share of a limited request's cost) and read here at scrape time.
   */
  readonly rateLimitDecisions: Counter<"policy" | "decision"> = new Counter({
    name: "gatehouse_ratelimit_decisions_total",
    help: "Rate limit decisions by policy and decision (allowed, limited, exempt, shadow, failed_open, failed_closed, local_allowed, local_limited, policy_invalid).",
    labelNames: ["policy", "decision"] as const,
    registers: [this.registry],
    collect: () => {
      const read = this.decisionTotals;
      if (read === undefined) return;
      this.rateLimitDecisions.reset();
      for (const [policy, decision, total] of read())
        this.rateLimitDecisions.inc({ policy, decision }, total);
    },
  });
  private decisionTotals: (() => Iterable<readonly [string, string, number]>) | undefined;

  /** Where the rate limit decision totals come from (the enforcer; a later one replaces an earlier). */
  setRateLimitDecisionSource(read: () => Iterable<readonly [string, string, number]>): void {
    this.decisionTotals = read;
  }
  /** Set by src/ratelimit/runtime.ts on each change of the shared store's health. */
  readonly rateLimitDegraded = new Gauge({
    name: "gatehouse_ratelimit_degraded",
    help: "1 while a rate limit policy's shared store (Redis) fails and its failure mode applies, else 0.",
    labelNames: ["policy"] as const,
    aggregator: "max",
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics !== false)
      collectDefaultMetrics({ register: this.registry, prefix: "gatehouse_" });
    const r = this.routes;
    // gatehouse_waf_decisions_total{route,action} (src/waf/decisions.ts counts; read at scrape time).
    registerWafMetrics(this.registry);
    this.registry.registerMetric(
      collector(
        "gatehouse_requests_total",
        "Requests answered, by route and status class.",
        "counter",
        () => {
          const out: Sample[] = [];
          for (const [route, s] of r.entries())
            s.byClass.forEach((v, i) => {
              if (v > 0) out.push({ labels: { route, code_class: classNames[i] as string }, value: v });
            });
          return out;
        },
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "gatehouse_request_duration_seconds",
        "Time from request to response headers, by route.",
        "histogram",
        () => {
          const out: Sample[] = [];
          for (const [route, s] of r.entries()) {
            let cumulative = 0;
            latencyBuckets.forEach((le, i) => {
              cumulative += s.buckets[i] as number;
              out.push({
                metricName: "gatehouse_request_duration_seconds_bucket",
                labels: { route, le },
                value: cumulative,
              });
            });
            out.push({
              metricName: "gatehouse_request_duration_seconds_bucket",
              labels: { route, le: "+Inf" },
              value: s.count,
            });
            out.push({
              metricName: "gatehouse_request_duration_seconds_sum",
              labels: { route },
              value: s.sum,
            });
            out.push({
              metricName: "gatehouse_request_duration_seconds_count",
              labels: { route },
              value: s.count,
            });
          }
          return out;
        },
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "gatehouse_response_bytes_total",
        "Response body bytes sent (when the length was known), by route.",
        "counter",
        () => [...r.entries()].map(([route, s]) => ({ labels: { route }, value: s.bytes })),
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "gatehouse_inflight_requests",
        "Requests being served right now, all listeners.",
        "gauge",
        () => [{ labels: {}, value: this.inflight() }],
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "gatehouse_client_connections",
        "Client connections open on plain-HTTP listeners (the raw front; TLS listeners are not counted).",
        "gauge",
        () => [{ labels: {}, value: this.connections() }],
      ) as never,
    );
    const outcomes = [
      ["routed", "routed"],
      ["refused", "refused"],
      ["upstream_failed", "upstreamFailed"],
      ["idle_closed", "idleClosed"],
      ["evicted", "evicted"],
    ] as const;
    this.registry.registerMetric(
      collector(
        "gatehouse_stream_connections_total",
        "Connections to TLS Passthrough and TCP listeners, and flows of UDP listeners, by listener and outcome (routed to an upstream; refused: no route, an invalid backendRef's share, no endpoint or a bad ClientHello; upstream_failed: the endpoint could not be connected, or refused a UDP datagram; idle_closed: --stream-idle-timeout-ms, --udp-idle-timeout-ms; evicted: a UDP flow closed at the cap of 16384 for a new one).",
        "counter",
        () =>
          [...this.streams()].flatMap(([listener, s]) =>
            outcomes.map(([outcome, key]) => ({ labels: { listener, outcome }, value: s[key] })),
          ),
      ) as never,
    );
    this.registry.registerMetric(
      collector(
        "gatehouse_stream_bytes_total",
        "Bytes carried by TLS Passthrough, TCP and UDP listeners, by listener and direction (upstream: from clients; client: to them).",
        "counter",
        () =>
          [...this.streams()].flatMap(([listener, s]) => [
            { labels: { listener, direction: "upstream" }, value: s.bytesToUpstream },
            { labels: { listener, direction: "client" }, value: s.bytesToClient },
          ]),
      ) as never,
    );
  }

  /** Count one answered request (hot path). `route` is a configured route name or undefined for none. */
  request(route: string | undefined, status: number, seconds: number, bytes: number): void {
    this.routes.record(route ?? noRoute, status, seconds, bytes);
  }

  /** One failed forwarding attempt; only on failure, so the label lookup costs nothing on success. */
  connectionRefused(reason: string): void {
    this.refusedConnections.inc({ reason });
  }

  tlsHandshakeFailure(listener: string, reason: string): void {
    this.tlsHandshakeFailures.inc({ listener, reason });
  }

  headerFieldsDropped(listener: string, count: number): void {
    this.droppedHeaderFields.inc({ listener }, count);
  }

  mirrored(mirror: string, outcome: string): void {
    this.mirrorCopies.inc({ mirror, outcome });
  }

  upstreamError(backend: string, kind: "connect" | "timeout" | "tls"): void {
    this.upstreamErrors.inc({ backend, kind });
  }

  /** Where the in-flight request count comes from (the proxy's servers). */
  setInflightSource(read: () => number): void {
    this.inflight = read;
  }

  /** Where the open client connection count comes from (the proxy's servers). */
  setConnectionSource(read: () => number): void {
    this.connections = read;
  }

  /** Where TLS Passthrough and TCP listeners' counters come from (the proxy's passthrough listeners). */
  setStreamSource(read: () => ReadonlyMap<string, StreamCounters>): void {
    this.streams = read;
  }

  /** Record a configuration apply and refresh what derives from the configuration. */
  configApplied(ok: boolean, seconds: number, model?: GatewayModel, problems?: readonly Problem[]): void {
    this.applies.inc({ result: ok ? "success" : "failure" });
    this.applySeconds.observe(seconds);
    if (!ok || model === undefined) return;
    const names = new Set<string>();
    for (const l of model.listeners)
      for (const v of l.virtualHosts) for (const rt of v.routes) names.add(rt.name);
    this.routes.retain(names);
    this.problems.reset();
    for (const p of problems ?? [])
      this.problems.inc({ kind: p.object.kind, reason: p.reason, severity: p.severity });
    this.backendEndpoints.reset();
    for (const b of Object.values(model.backends))
      this.backendEndpoints.set({ backend: b.id }, b.problem === undefined ? b.endpoints.length : 0);
    this.certExpiry.reset();
    for (const l of model.listeners) {
      for (const c of l.tls?.certificates ?? []) {
        const expiry = certificateExpiry(c.certPem);
        const name = `${c.source.namespace}/${c.source.name}`;
        if (expiry !== undefined) this.certExpiry.set({ listener: l.name, certificate: name }, expiry);
      }
    }
  }

  /**
   * Where the other serving processes' samples come from (`--workers`: each worker counts its own
   * requests; the primary's /metrics reports the whole gateway).
   */
  setPeers(read: () => Promise<PeerMetrics[]>): void {
    this.peers = read;
  }

  /** The Prometheus text exposition: this process, plus its workers when it has any. */
  async text(): Promise<string> {
    if (this.peers === undefined) return this.registry.metrics();
    const own = await this.registry.getMetricsAsJSON();
    const others = await this.peers();
    if (others.length === 0) return this.registry.metrics();
    // prom-client's aggregator hashes every sample's labels; some collectors leave them out when empty.
    for (const metrics of [own, ...others])
      for (const m of metrics) for (const v of m.values) (v as { labels?: object }).labels ??= {};
    return AggregatorRegistry.aggregate([own, ...others]).metrics();
  }
}

/** notAfter of the first certificate in a PEM chain, in Unix seconds; undefined if it does not parse. */
export function certificateExpiry(pem: string): number | undefined {
  try {
    return Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000);
  } catch {
    return undefined;
  }
}
