/**
 * The upstreams of the route model: a Service port resolved to pod endpoints, and how it is spoken to
 * (HTTP/1.1, h2c, WebSocket; TLS).
 */
import type { HashKeyPart } from "./balancing.ts";
import type { SourceRef } from "./source.ts";

/** Protocol spoken to the upstream. */
export type BackendProtocol = "http" | "h2c" | "websocket";

/** An upstream: one Service port, resolved to pod endpoints. */
export interface Backend {
  /** `<namespace>/<service>:<port>` (Service port number); `…@cluster-ip`: the Service's cluster IP. */
  readonly id: string;
  /** The Service this backend is. */
  readonly service: {
    /** The Service's namespace. */
    readonly namespace: string;
    /** The Service's name. */
    readonly name: string;
    /** The Service port number (never the targetPort; endpoints carry the pod port). */
    readonly port: number;
  };
  /** From the Service port's appProtocol; `http` by default. */
  readonly protocol: BackendProtocol;
  /**
   * TLS to every endpoint (BackendTLSPolicy, ingress-nginx `backend-protocol: HTTPS|GRPCS` with
   * `proxy-ssl-*`); `protocol` is then what is spoken inside it (`http`: HTTP/1.1, `h2c`: HTTP/2 by ALPN
   * `h2`). Absent: cleartext. The certificate is always verified; there is no "TLS without verification".
   */
  readonly tls?: BackendTLS;
  /** Endpoints traffic goes to: the ready ones, or the serving-but-terminating ones if none are ready. */
  readonly endpoints: readonly Endpoint[];
  /**
   * Why the backend cannot serve, when it cannot: requests to it get 503. `InvalidBackendTLS`: TLS is
   * asked for but cannot be set up as asked (a policy without a valid CA, a bad client certificate): the
   * backend is never spoken to in cleartext instead.
   */
  readonly problem?: "ServiceNotFound" | "PortNotFound" | "NoReadyEndpoints" | "InvalidBackendTLS";
  /** How the gateway judges the endpoints' health (a BackendTrafficPolicy's `healthCheck`); absent: it
   * does not, and every endpoint the EndpointSlices call ready takes traffic. */
  readonly healthCheck?: BackendHealthCheck;
  /**
   * Responses from this backend are compressed for clients that accept it (a BackendTrafficPolicy's
   * `compression`, else the `--compression` flags; docs/compression.md). Absent: passed on as they come.
   */
  readonly compression?: ResponseCompression;
  /**
   * Serverless-style activation (a ScaleToZeroPolicy, or the Service's `gatehouse.dev/scale-*`
   * annotations): with no ready endpoint a request is held while the workload wakes instead of getting
   * 503 (docs/scale-to-zero.md). Absent: a backend without endpoints answers 503 at once.
   */
  readonly activation?: BackendActivation;
  /**
   * Caps on what this process sends the backend at once (a BackendTrafficPolicy's `circuitBreaker`;
   * docs/traffic-policy.md). A request over a cap is answered 503 at once and counted. Absent: no cap.
   */
  readonly circuitBreaker?: CircuitBreaker;
  /**
   * How an endpoint of this backend is picked (a BackendTrafficPolicy's `loadBalancer`), on every route
   * that sends here and sets no algorithm of its own (a route's `balancing.algorithm` other than
   * `RoundRobin` wins there). Absent: the route's.
   */
  readonly loadBalancer?: BackendLoadBalancer;
  /**
   * The backend whose per-process state this one shares: a variant of a Service port made for the routes
   * of an HTTPRoute or a Gateway (their BackendTrafficPolicy) whose health checking (`health`: one outlier
   * detector, one prober) or circuit breaker (`breaker`: one count) is its Service's own is judged and
   * counted with that Service port's backend, as Envoy counts per cluster. Absent: its own id.
   */
  readonly stateOf?: { readonly health?: string; readonly breaker?: string };
}

/** A Service-level choice of balancing algorithm (docs/traffic-policy.md, Load balancing). */
export interface BackendLoadBalancer {
  /** The BackendTrafficPolicy it came from. */
  readonly source: SourceRef;
  /**
   * As `Balancing.algorithm` (model/balancing.ts), plus `Random`: an endpoint drawn at random (Envoy's
   * `RANDOM`).
   */
  readonly algorithm: "RoundRobin" | "Random" | "LeastRequest" | "ConsistentHash";
  /** `ConsistentHash` only: the key (one header, one cookie or the client's address). */
  readonly hashKey?: readonly HashKeyPart[];
}

/**
 * Envoy's circuit breaker thresholds as Envoy Gateway names them, counted per backend and gateway process
 * (as Envoy's are per proxy): every front and listener of the process shares one count. Absent: no cap
 * (Envoy's default is 1024 each; a policy that wants that writes it).
 */
export interface CircuitBreaker {
  /** The BackendTrafficPolicy it came from, for logs and metrics. */
  readonly source: SourceRef;
  /**
   * Requests in flight to the backend at once, from sending to the end of the response body; one more
   * is answered 503 (Envoy `max_requests`).
   */
  readonly maxParallelRequests?: number;
  /**
   * Retries in flight at once (a retry counts from the decision to retry until its attempt's answer or
   * failure); one more is not made, and the attempt's own outcome is answered (Envoy `max_retries`).
   */
  readonly maxParallelRetries?: number;
  /**
   * Requests waiting for a connection (Envoy `max_pending_requests`). No request ever waits for one here
   * (one over a connection cap is answered 503 at once), so the count is always 0 and the cap always
   * met: kept so the model says what the policy asked for.
   */
  readonly maxPendingRequests?: number;
  /**
   * Upstream connections open to the backend at once, idle ones included (Envoy `max_connections`); a
   * request that would need one more is answered 503. The fetch path opens one per request for such a
   * backend (no keep-alive), so there it caps requests in flight alike.
   */
  readonly maxConnections?: number;
  /** The same cap per endpoint (Envoy Gateway `perEndpoint.maxConnections`). */
  readonly perEndpoint?: { readonly maxConnections?: number };
  /** Requests one upstream connection carries before it is closed (the fetch path: 1, no keep-alive). */
  readonly maxRequestsPerConnection?: number;
}

/** How a backend whose workload may have no replica is woken, held for, and put back to sleep. */
export interface BackendActivation {
  /** The ScaleToZeroPolicy, or the Service whose annotations asked for it (logs, metrics, conditions). */
  readonly source: SourceRef;
  /** The workload scaled through its `scale` subresource, in the Service's namespace. */
  readonly workload: { readonly kind: "Deployment" | "StatefulSet"; readonly name: string };
  /**
   * Who moves the workload between 0 and 1: `Gateway` (it raises replicas 0→1 on the first held request
   * and the leader lowers them to 0 after `idleMs`), `External` (an autoscaler does; requests are only held).
   */
  readonly scaler: "Gateway" | "External";
  /** 0: scaled to zero after `idleMs`; 1: never scaled down by the gateway. */
  readonly minReplicas: 0 | 1;
  /** No request on any gateway replica for this long: the leader scales the workload to 0. */
  readonly idleMs: number;
  /** Longest a request is held; then 503 with Retry-After. */
  readonly maxHoldMs: number;
  /** Requests held at once per backend and process; one more: 503 with Retry-After at once. */
  readonly queueLimit: number;
  /** Largest body a held request may carry; larger: 503 at once. */
  readonly maxHeldBodyBytes: number;
  /** The Service port as declared, so an EndpointSlice alone resolves its endpoints (the wake's short path). */
  readonly servicePort: {
    readonly name?: string;
    readonly port: number;
    readonly targetPort?: number | string;
  };
}

/** Health checking of a backend's endpoints: passive (real requests), active (probes), or both. */
export interface BackendHealthCheck {
  /** The BackendTrafficPolicy it came from, for logs and the dashboard. */
  readonly source: SourceRef;
  /** Outlier ejection from the outcome of real requests (src/proxy/health/). */
  readonly passive?: PassiveHealthCheck;
  /** Probes sent to every endpoint by each gateway process (src/proxy/health/active-checker.ts). */
  readonly active?: ActiveHealthCheck;
}

/**
 * Active HTTP health checking, as Envoy Gateway names it (`healthCheck.active`, type HTTP): each gateway
 * process sends `method path` to every endpoint once per `intervalMs` (jittered); an endpoint whose
 * probes fail `unhealthyThreshold` times in a row takes no traffic until `healthyThreshold` probes in a
 * row succeed. When every endpoint is unhealthy, all take traffic again (Envoy's panic mode).
 */
export interface ActiveHealthCheck {
  /** Path and query of the probe (`/healthz`). */
  readonly path: string;
  /** The probe's method; `GET` by default. */
  readonly method: string;
  /** Statuses that count as healthy; `[200]` by default. */
  readonly expectedStatuses: readonly number[];
  /** Between two probes of one endpoint. */
  readonly intervalMs: number;
  /** A probe without response headers in this long failed. */
  readonly timeoutMs: number;
  /** Failed probes in a row that take an endpoint out. */
  readonly unhealthyThreshold: number;
  /** Successful probes in a row that bring it back. */
  readonly healthyThreshold: number;
}

/**
 * Passive health checking, as Envoy's outlier detection counts it (consecutive errors per endpoint, an
 * ejection for `baseEjectionMs` times the number of ejections so far, up to 300 s or the base if longer).
 * An endpoint of the backend is ejected (no traffic) when it fails this many times in a row; it takes
 * traffic again when its time is over. Never the backend's last usable endpoint. Counted per process.
 */
export interface PassiveHealthCheck {
  /** Consecutive 5xx responses (and, unless split, connect failures, resets and timeouts); 0: off. */
  readonly consecutive5xxErrors: number;
  /** Consecutive 502, 503 and 504 responses (and, unless split, local failures); 0: off. */
  readonly consecutiveGatewayErrors: number;
  /** Failures to connect, resets and timeouts counted apart from responses (then 5xx counts responses only). */
  readonly splitExternalLocalOriginErrors: boolean;
  /** With the split: consecutive local failures that eject; 0: off. */
  readonly consecutiveLocalOriginFailures: number;
  /** The first ejection's length; the n-th lasts n times this (up to max(300 s, this)). */
  readonly baseEjectionMs: number;
  /** Each interval an endpoint spends in service takes one off its count of ejections (the next is shorter). */
  readonly intervalMs: number;
  /** At most this share of the backend's endpoints is ejected at once (one always may be, but never the last). */
  readonly maxEjectionPercent: number;
}

/** How the gateway speaks TLS to a backend's endpoints. */
export interface BackendTLS {
  /**
   * Sent as SNI, and the name the backend's certificate must carry when `subjectAltNames` is absent
   * (BackendTLSPolicy `validation.hostname`; ingress-nginx `proxy-ssl-name`).
   */
  readonly serverName: string;
  /** PEM CA certificates the backend's chain must end in; absent: the runtime's bundled public roots. */
  readonly caPem?: string;
  /**
   * When present, the certificate must carry one of these (instead of `serverName`): `Hostname` against
   * its DNS names (wildcards as RFC 6125), `URI` equal to a URI name (BackendTLSPolicy `subjectAltNames`).
   */
  readonly subjectAltNames?: readonly BackendSubjectAltName[];
  /** Presented when the backend asks for one (Gateway `spec.tls.backend.clientCertificateRef`; `proxy-ssl-secret`). */
  readonly clientCertificate?: { readonly certPem: string; readonly keyPem: string };
  /** TLS versions offered (ingress-nginx `proxy-ssl-protocols`); absent: TLS 1.2 and 1.3. */
  readonly versions?: { readonly min: TLSVersion; readonly max: TLSVersion };
  /** The object that asked for TLS (the BackendTLSPolicy, or the Ingress), for logs and the dashboard. */
  readonly source: SourceRef;
}

export type TLSVersion = "TLSv1.2" | "TLSv1.3";

/** One name a backend certificate may carry (BackendTLSPolicy `subjectAltNames`). */
export interface BackendSubjectAltName {
  readonly type: "Hostname" | "URI";
  readonly value: string;
}

/** One pod address and port. */
export interface Endpoint {
  /** IP address (v4 or v6, no brackets). */
  readonly address: string;
  /** Target port on the pod. */
  readonly port: number;
  /** Pod name from the EndpointSlice's targetRef, when known (logs only). */
  readonly pod?: string;
}

/** A response content coding the gateway can apply (RFC 9110 §8.4.1 names, as in Content-Encoding). */
export type ContentCoding = "gzip" | "br" | "zstd";

/**
 * Response compression (docs/compression.md): a response is compressed when the client accepts one of
 * `codings` (Accept-Encoding, q-values honoured; on a tie the earlier one here), its media type is one of
 * `types`, its Content-Length (when it has one) is at least `minBytes`, and nothing forbids it (a
 * Content-Encoding already, `Cache-Control: no-transform`, HEAD, 204, 206, 304, a Range request). The
 * body is compressed as it streams, never read whole first.
 */
export interface ResponseCompression {
  /** The BackendTrafficPolicy it came from, or the gateway itself (the `--compression` flags). */
  readonly source: SourceRef;
  /** Codings offered, most preferred first; never empty. */
  readonly codings: readonly ContentCoding[];
  /** Media types compressed, lower-case, without parameters (`text/html`); `*` matches any. */
  readonly types: readonly string[];
  /** Responses whose Content-Length is below this are sent as they are; unknown lengths are compressed. */
  readonly minBytes: number;
  /** gzip level, 1 (fastest) to 9. */
  readonly gzipLevel: number;
  /** Brotli quality, 0 (fastest) to 11. */
  readonly brotliQuality: number;
  /** zstd level, 1 (fastest) to 22. */
  readonly zstdLevel: number;
}
