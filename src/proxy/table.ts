/**
 * The compiled form of a GatewayModel: what the data plane reads on every request. Built once per model
 * by `compile()`, never mutated afterwards except for the balancing counters inside the pickers, and
 * swapped into a listener with one reference assignment.
 */
import type { CompiledClientCertificate } from "../auth/client-certificate.ts";
import type { CompiledIPAccess } from "../auth/ip-access.ts";
import type {
  BackendLoadBalancer,
  ListenerProtocol,
  ListenerTLS,
  ResponseBandwidth,
  RetryPolicy,
  RouteAuth,
  RouteRateLimit,
  RouteTimeouts,
  SourceRef,
} from "../model/index.ts";
import type { LocationPart } from "../model/location-template.ts";
import type { CompiledWaf } from "../waf/compiled.ts";
import type { BackendActivator } from "./activation/activator.ts";
import type { CompiledBackendTLS } from "./backend-tls/options.ts";
import type { BalanceInput } from "./balancing/request-input.ts";
import type { CircuitBreaker, ClientConcurrencyZone } from "./circuit-breaker/breaker.ts";
import type { CompiledCompression } from "./compression/response-rules.ts";
import type { FilterChain } from "./filters/filter-types.ts";
import type { OutlierDetector } from "./health/outlier-detector.ts";
import type { CaptureRegex, ValueRegex } from "./match/regex/regex.ts";
import type { ValueMatcher } from "./match/values.ts";

/** Every listener of one model, plus what the compiler had to say about it. */
export interface RouteTable {
  readonly listeners: readonly ListenerTable[];
  /** Problems found while compiling (bad regex, duplicate host, unknown filter…); never fatal. */
  readonly warnings: readonly string[];
}

/** One listener's routes, indexed by host. */
export interface ListenerTable {
  readonly name: string;
  /** From the model; "" means the server's bind address. */
  readonly address: string;
  /** The port clients see; 0 in tests means "whatever was bound". */
  readonly port: number;
  /** The port the socket binds when it is not `port` (model `Listener.bindPort`). */
  readonly bindPort?: number;
  readonly protocol: ListenerProtocol;
  /** The model listener's own hostname (absent: every host); decides ownership when listeners merge. */
  readonly hostname: string | undefined;
  /** Merged socket only: the hostname of every model listener served on it (HTTP/2 421 checks, h2/). */
  readonly memberHostnames?: readonly (string | undefined)[];
  /** `http` or `https`, for X-Forwarded-Proto and redirects. */
  readonly scheme: "http" | "https";
  readonly tls: ListenerTLS | undefined;
  readonly hosts: VirtualHostIndex;
  /**
   * The smallest `requestBodyMaxBytes` of its routes (Infinity: none has one). The raw front reads a body
   * whole before routing only up to this, so that one past a route's limit is refused unread.
   */
  readonly smallestBodyMax: number;
}

/** Virtual hosts by how they match; see `findVirtualHost`. */
export interface VirtualHostIndex {
  readonly exact: ReadonlyMap<string, CompiledVirtualHost>;
  /** `*.foo.com` (one label) keyed by `foo.com`. */
  readonly oneLabel: ReadonlyMap<string, CompiledVirtualHost>;
  /** `*.foo.com` (any number of labels) keyed by `foo.com`. */
  readonly anyLabels: ReadonlyMap<string, CompiledVirtualHost>;
  readonly any: CompiledVirtualHost | undefined;
}

export interface CompiledVirtualHost {
  readonly hostname: string;
  /** All routes in precedence order. */
  readonly routes: readonly CompiledRoute[];
  /** Narrows the candidates for a path on larger hosts (match/path-index.ts); undefined: scan `routes`. */
  readonly pathIndex: PathIndex | undefined;
}

/** What match/path-index.ts builds for a virtual host (the table holds it; the matcher reads it). */
/**
 * Routes in precedence order, and a bit per route (the first 31) set when its path alone decides — no
 * method, header or query condition. Reaching such a route through the index is a match without any
 * check; other routes (and any past the 31st) are checked in full.
 */
export interface Candidates {
  readonly routes: CompiledRoute[];
  mask: number;
}

export interface PathEntry {
  /** Exact routes for this very path. */
  exact: Candidates | undefined;
  /** Prefix routes whose value is this path. */
  prefix: Candidates | undefined;
}

export interface PathIndex {
  readonly byPath: ReadonlyMap<string, PathEntry>;
  /** Prefix `/`: candidates for every path. */
  readonly root: Candidates | undefined;
  /** The most `/` in a prefix value of this host: how many parts of a path are looked up. */
  readonly maxDepth: number;
  /** Never path-only: their path must still be checked. */
  readonly always: Candidates | undefined;
}

export const PATH_EXACT = 0;
export const PATH_PREFIX = 1;
export const PATH_REGEX = 2;
/** A route whose path condition could not be compiled: it never matches. */
export const PATH_NEVER = 3;

export interface CompiledRoute {
  /** Position in its virtual host; keeps precedence when merging index candidates. */
  readonly index: number;
  readonly name: string;
  readonly source: SourceRef;
  readonly pathType: 0 | 1 | 2 | 3;
  /** Exact: the path. Prefix: the prefix without trailing slash ("" for `/`). */
  readonly pathValue: string;
  readonly pathRegex: ValueRegex | undefined;
  readonly method: string | undefined;
  readonly headers: readonly ValueMatcher[];
  readonly query: readonly ValueMatcher[];
  /** Route-level filters (all actions). Forward actions carry per-backend chains instead. */
  readonly filters: FilterChain;
  readonly action: CompiledAction;
  readonly timeouts: RouteTimeouts | undefined;
  readonly retry: RetryPolicy | undefined;
  /** Client address lists, checked before anything else (auth/ip-access.ts); undefined: any address. */
  readonly ipAccess: CompiledIPAccess | undefined;
  /**
   * `satisfy: Any` that can take effect (model `RouteAuth.satisfy`; auth that does not fail closed, an allow
   * list): a client inside the allow lists needs no credentials, one outside must authenticate.
   */
  readonly addressGrants: boolean;
  /** What the client's certificate must be (auth/client-certificate.ts); undefined: nothing. */
  readonly clientCertificate: CompiledClientCertificate | undefined;
  /** Authentication the route requires (the model's object itself: the enforcer keys on identity). */
  readonly auth: RouteAuth | undefined;
  /** The route's rate limit (the model's object itself: the enforcer caches per-limit work on it). */
  readonly rateLimit: RouteRateLimit | undefined;
  /** The route's WAF (src/waf/compiled.ts), run after the other guards; undefined: none. */
  readonly waf: CompiledWaf | undefined;
  /** Every request of the route passes a CORS filter (on the route or on every backend): a preflight it
   * answers then skips authentication and rate limits (request/guards.ts). */
  readonly cors: boolean;
  /**
   * Share of its requests written to the access log (0: none, model `accessLog: false`; else the model's
   * `accessLogSample`); undefined: `--access-log-sample`'s. Metrics count them either way.
   */
  readonly logShare: number | undefined;
  /** Response bodies are paced to this (model `responseBandwidth`; src/proxy/bandwidth/); undefined: not. */
  readonly responseBandwidth: ResponseBandwidth | undefined;
  /** Largest request body taken (model `requestBodyMaxBytes`; 413 past it); undefined: no limit. */
  readonly requestBodyMaxBytes: number | undefined;
  /** Requests in flight per client (model `clientConcurrency`; circuit-breaker/); undefined: no cap. */
  readonly clientZone?: ClientConcurrencyZone | undefined;
  /** Responses replaced by an error backend's (model `errorPages`; error-pages/); undefined: none. */
  readonly errorPages?: CompiledErrorPages | undefined;
}

/** A route's error pages, ready for the request path (error-pages/replace.ts). */
export interface CompiledErrorPages {
  readonly codes: ReadonlySet<number>;
  /** Undefined when the model's backend is unknown or cannot be asked (the gateway's own errors then). */
  readonly backend: CompiledBackend | undefined;
  readonly upstream: boolean;
  /** X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port, as sent. */
  readonly fields: readonly (readonly [string, string])[];
}

export type CompiledAction = CompiledForward | CompiledRedirect | CompiledDirect;

export interface CompiledForward {
  readonly kind: "Forward";
  /** Picks a backend choice by weight; undefined when every weight is 0. */
  readonly pick: () => BackendChoice | undefined;
  /** Every choice `pick` may return (the raw-socket front checks them all once per route). */
  readonly choices: readonly BackendChoice[];
  /** Set when the route balances other than round robin or pins sessions (balancing/); absent: `pick`
   * and `nextEndpoint`, untouched. */
  readonly balancer?: ForwardBalancer;
}

/** A route's balancing (balancing/route-balancer.ts): the choice and endpoints of one request. */
export interface ForwardBalancer {
  /** Undefined when no choice has a positive weight. */
  lease(input: BalanceInput): ChoiceLease | undefined;
}

/** One request's backend choice and, attempt by attempt, its endpoints. */
export interface ChoiceLease {
  readonly choice: BackendChoice;
  /** The session token field (Set-Cookie or the session header) for the response, once (re)pinned. */
  readonly responseField: readonly [string, string] | undefined;
  /** The next attempt's endpoint base; only when the choice's backend has endpoints. */
  next(): string;
  /** The attempt ended: response headers arrived, or (`failed`) it did not. Idempotent. */
  end(failed: boolean): void;
}

/** One weighted backend of a route, with the route's and the backend's filters already concatenated. */
export interface BackendChoice {
  /** Undefined when the model names a backend id it does not define (answered with 503). */
  readonly backend: CompiledBackend | undefined;
  readonly backendId: string;
  readonly filters: FilterChain;
  /** Gateway API invalid reference: answer this status when picked, never forward (model `failStatus`). */
  readonly failStatus: number | undefined;
}

export interface CompiledRedirect {
  readonly kind: "Redirect";
  readonly scheme: "http" | "https" | undefined;
  readonly hostname: string | undefined;
  readonly port: number | undefined;
  readonly path: CompiledPathModifier | undefined;
  readonly statusCode: number;
  /** Model `stripTrailingSlash`; absent: false. */
  readonly stripTrailingSlash?: boolean;
  /** Model `writeDefaultPort`; absent: false. */
  readonly writeDefaultPort?: boolean;
  /** Model `location`, parsed once; when set, the whole Location is this filled in. */
  readonly location?: readonly LocationPart[];
}

export interface CompiledDirect {
  readonly kind: "DirectResponse";
  readonly status: number;
  readonly body: string;
  /** Media type of `body`. */
  readonly contentType: string;
  /** Set when the route could not be compiled as written: logged on each hit. */
  readonly error?: string;
}

export interface CompiledPathModifier {
  readonly full: boolean;
  readonly value: string;
  /** `RegexSubstitute`: the pattern whose groups fill `value`'s `$1`…`$9`. */
  readonly regex?: CaptureRegex;
}

/** An upstream with its endpoints as ready-made URL prefixes. */
export interface CompiledBackend {
  readonly id: string;
  /** `http://10.0.0.1:8080`, `http://[fd00::1]:8080`, … */
  readonly bases: readonly string[];
  /** Why it cannot serve; set when `bases` is empty. */
  readonly problem: string | undefined;
  /** Speak HTTP/2 with prior knowledge (appProtocol `kubernetes.io/h2c`) instead of HTTP/1.1. */
  readonly h2c: boolean;
  /** TLS to the endpoints (HTTP/2 by ALPN when `h2c`); absent: cleartext. */
  readonly tls?: CompiledBackendTLS;
  /** Passive health checking (health/): which endpoints are ejected; undefined: none is ever. */
  readonly health?: OutlierDetector | undefined;
  /** Serverless-style activation (activation/): requests wait while it wakes; undefined: 503 at once. */
  readonly activation?: BackendActivator | undefined;
  /** Responses compressed for clients that accept them (compression/); undefined: passed as they come. */
  readonly compression?: CompiledCompression | undefined;
  /** Caps on requests, retries and connections (circuit-breaker/; model `circuitBreaker`); undefined: none. */
  readonly breaker?: CircuitBreaker | undefined;
  /** The Service's algorithm (model `loadBalancer`), for routes that set none; undefined: the route's. */
  readonly balancing?: BackendLoadBalancer | undefined;
  /** Round-robin position; the one mutable field, shared by every route using this backend. */
  next: number;
}

/**
 * The next endpoint base of a backend, round-robin, skipping ejected endpoints and `avoid` (the endpoint
 * a retry's previous attempt failed on) while another exists. Callers check `bases.length` first.
 */
export function nextEndpoint(backend: CompiledBackend, avoid?: string): string {
  const i = backend.next;
  const n = backend.bases.length;
  backend.next = i + 1 >= n ? 0 : i + 1;
  // The common case: no health checking (or nothing ejected), first attempt.
  const health = backend.health;
  if ((health === undefined || health.ejectedCount === 0) && avoid === undefined)
    return backend.bases[i] as string;
  const j = usableEndpoint(backend, i, avoid);
  if (j !== i) backend.next = j + 1 >= n ? 0 : j + 1;
  return backend.bases[j] as string;
}

/**
 * `i` when it is in service and not `avoid`, else the first such endpoint after it; failing that, the
 * first in service (ejection never takes the last one), else `i`. Used by `nextEndpoint` and the pickers.
 */
export function usableEndpoint(backend: CompiledBackend, i: number, avoid: string | undefined): number {
  const bases = backend.bases;
  const n = bases.length;
  const health = backend.health;
  const ejected = health !== undefined && health.ejectedCount > 0;
  let fallback = -1;
  for (let k = 0; k < n; k++) {
    const j = i + k >= n ? i + k - n : i + k;
    const base = bases[j] as string;
    if (ejected && health.isEjected(base)) continue;
    if (base !== avoid) return j;
    if (fallback < 0) fallback = j;
  }
  return fallback < 0 ? i : fallback;
}
