/**
 * The upstreams of the route model: a Service port resolved to pod endpoints, and how it is spoken to
 * (HTTP/1.1, h2c, WebSocket; TLS).
 */
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
}

/** Health checking of a backend's endpoints. Only passive checking exists (active probes do not yet). */
export interface BackendHealthCheck {
  /** The BackendTrafficPolicy it came from, for logs and the dashboard. */
  readonly source: SourceRef;
  /** Outlier ejection from the outcome of real requests (src/proxy/health/). */
  readonly passive?: PassiveHealthCheck;
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
