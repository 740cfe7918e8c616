/**
 * HTTP listeners and what they serve: virtual hosts, routes with their matches, actions and filters,
 * and the backends (Service ports resolved to pod endpoints) that forwards and passthrough routes use.
 */
import type { IPAccessList, RouteAuth, RouteWaf } from "./auth.ts";
import type { Balancing } from "./balancing.ts";
import type { RouteClientCertificate } from "./client-certificates.ts";
import type { Filter, PathModifier } from "./filters.ts";
import type { RouteRateLimit } from "./rate-limits.ts";
import type { ResponseBandwidth, RetryPolicy, RouteTimeouts } from "./route-limits.ts";
import type { SourceRef } from "./source.ts";

/** Protocol a listener speaks to clients. */
export type ListenerProtocol = "HTTP" | "HTTPS";

/** One socket the gateway accepts traffic on, and what it serves there. */
export interface Listener {
  /** Stable name: `default/http`, `default/https` for Ingress, `gateway/<ns>/<name>/<listener>` for Gateways. */
  readonly name: string;
  /** Address to bind; "" means the process-wide `--bind` address. */
  readonly address: string;
  /** Port the listener binds and the port clients see (used for redirects and Host checks). */
  readonly port: number;
  /**
   * Port the socket binds when it is not `port`: in a cluster a Gateway listener's port is served on an
   * internal port that the Gateway's Service maps `port` to (docs/kubernetes.md). Redirects and Host
   * checks still use `port`.
   */
  readonly bindPort?: number;
  /** Client-facing protocol. */
  readonly protocol: ListenerProtocol;
  /** TLS termination settings; present only when `protocol` is `HTTPS`. */
  readonly tls?: ListenerTLS;
  /**
   * The listener's own hostname (Gateway API `listener.hostname`, `*.` wildcards matching one or more
   * labels); absent means every host. When listeners share an address and port, a request belongs to the
   * listener whose hostname matches it most specifically, and only that listener's virtual hosts serve it
   * (listener isolation): a host its routes do not cover gets 404, never a broader listener's routes.
   */
  readonly hostname?: string;
  /** The object that asked for this listener (a Gateway, or the gateway itself for the defaults). */
  readonly source: SourceRef;
  /** Virtual hosts in no particular order; the compiler indexes them by hostname. */
  readonly virtualHosts: readonly VirtualHost[];
}

/** Certificates for an HTTPS listener, picked by SNI. */
export interface ListenerTLS {
  /** Certificates offered on this listener; SNI picks by `hostnames`, the first is the fallback. */
  readonly certificates: readonly TLSCertificate[];
  /**
   * The gateway's default certificate (`--default-certificate`, else the one generated at start), set on
   * Gateway HTTPS listeners: on a port shared by listeners that all have hostnames, it is what a client
   * whose SNI none of them covers is offered, rather than another listener's certificate. Absent when
   * the gateway has none, and on the Ingress listener (whose `certificates` start with it already).
   */
  readonly defaultCertificate?: TLSCertificate;
  /**
   * Client certificates the listener asks for in the handshake (Gateway `spec.tls.frontend`): absent, none
   * is asked for. Served by the raw front's HTTPS listeners; a front that cannot enforce it does not open
   * the listener (fail closed).
   */
  readonly clientValidation?: ClientCertificateValidation;
}

/** How an HTTPS listener checks client certificates (Gateway API `FrontendTLSValidation`). */
export interface ClientCertificateValidation {
  /** PEM CA certificates a client certificate must chain to. */
  readonly caPem: string;
  /**
   * `AllowValidOnly`: a connection without a valid client certificate fails its handshake.
   * `AllowInsecureFallback`: it is accepted, and guards see that it was not verified.
   */
  readonly mode: "AllowValidOnly" | "AllowInsecureFallback";
}

/** One certificate and key, with the names it is valid for. */
export interface TLSCertificate {
  /** The Secret (or generated default) this came from. */
  readonly source: SourceRef;
  /** DNS names to serve this certificate for (SNI); may contain one leading `*.` wildcard. */
  readonly hostnames: readonly string[];
  /** PEM certificate chain. */
  readonly certPem: string;
  /** PEM private key. Redacted by `dumpModel`. */
  readonly keyPem: string;
  /**
   * PEM CAs that verify client certificates in handshakes with these names (ingress-nginx
   * `auth-tls-secret`): the listener then asks every client for a certificate, verified only against the
   * CAs of the SNI entry, and the routes of these hosts decide (`Route.clientCertificate`). Absent: none.
   */
  readonly clientCAPem?: string;
  /**
   * OpenSSL cipher list for TLS 1.2 handshakes with these names (ingress-nginx `ssl-ciphers`); absent:
   * Gatehouse's list (ECDHE with AEAD). TLS 1.0/1.1 stay refused and TLS 1.3 suites are fixed either way.
   */
  readonly ciphers?: string;
}

/**
 * How a virtual host's name is matched against the request's Host (port stripped, lower-cased).
 * - `Exact`: the names are equal.
 * - `WildcardOneLabel`: `*.foo.com` matches `bar.foo.com` only (Ingress semantics).
 * - `WildcardAnyLabels`: `*.foo.com` matches `bar.foo.com` and `a.bar.foo.com` (Gateway API semantics).
 * - `Any`: every host (Ingress rules without a host, HTTPRoutes without hostnames).
 * Lookup order is Exact, then the longest wildcard suffix, then Any. A request that selects a virtual
 * host never falls through to a less specific one, even when none of its routes match (listener isolation).
 */
export type HostMatchType = "Exact" | "WildcardOneLabel" | "WildcardAnyLabels" | "Any";

/** The routes served for one hostname pattern on one listener. */
export interface VirtualHost {
  /** `foo.com`, `*.foo.com` or `*` (with `match: Any`). Always lower-case. */
  readonly hostname: string;
  /** How `hostname` is matched. */
  readonly match: HostMatchType;
  /** Routes in precedence order: the first whose match succeeds serves the request. */
  readonly routes: readonly Route[];
}

/** One match and what to do with requests that satisfy it. */
export interface Route {
  /** Stable unique name, e.g. `ingress/ns/name/rule/0/path/0` or `httproute/ns/name/rule/0/match/0`. */
  readonly name: string;
  /** The object this route was translated from. */
  readonly source: SourceRef;
  /** The HTTPRoute rule's `name` (Gateway API named rules, GEP-995), when it has one; for logs and
   * metrics only. The route `name` keeps the rule index so it stays stable if a name is added. */
  readonly ruleName?: string;
  /** Conditions a request must meet (all of them). */
  readonly match: RouteMatch;
  /** Filters applied in order before the action (header edits, rewrites, mirrors, CORS). */
  readonly filters: readonly Filter[];
  /** What finally answers the request. */
  readonly action: RouteAction;
  /** Time limits; absent fields take the gateway's defaults. */
  readonly timeouts?: RouteTimeouts;
  /** Retry policy for forwarded requests; absent means no retries. */
  readonly retry?: RetryPolicy;
  /**
   * Client address lists, checked first (before authentication); a request must pass every one (an
   * Ingress's source-range annotations and the AuthPolicy that wins the route). Absent: any address.
   */
  readonly ipAccess?: readonly IPAccessList[];
  /** Authentication required before the route's filters and action run (an AuthPolicy); absent: none. */
  readonly auth?: RouteAuth;
  /** What the client's TLS certificate must be (ingress-nginx `auth-tls-*`); absent: nothing. */
  readonly clientCertificate?: RouteClientCertificate;
  /** Request rate limit (a RateLimitPolicy, or ingress-nginx `limit-*` annotations); absent: unlimited. */
  readonly rateLimit?: RouteRateLimit;
  /** Web application firewall (ingress-nginx `enable-modsecurity`; docs/waf.md); absent: none. */
  readonly waf?: RouteWaf;
  /** `false`: its requests are not written to the access log (still counted in metrics); absent: logged. */
  readonly accessLog?: false;
  /**
   * Share of its requests written to the access log, 0…1, in place of `--access-log-sample`
   * (`gatehouse.dev/access-log-sample`); absent: the flag's share. There is no access log at all with
   * `--access-log-sample 0` (serve.ts warns when a route asks for a share then).
   */
  readonly accessLogSample?: number;
  /** Response bodies are paced to this bandwidth (ingress-nginx `limit-rate`); absent: as fast as possible. */
  readonly responseBandwidth?: ResponseBandwidth;
  /**
   * Largest request body taken, in bytes (nginx `client_max_body_size`, ingress-nginx `proxy-body-size`):
   * a Content-Length past it is answered 413 before any of the body is read; a body without one (chunked,
   * HTTP/2) that grows past it is cut: 413 when no response has started, else the stream is reset; the
   * backend never gets more than this. A positive whole number; absent: no limit.
   */
  readonly requestBodyMaxBytes?: number;
  /**
   * Requests in flight at once from one client address (as client-address.ts finds it) on every route of
   * one zone (ingress-nginx `limit-connections`, nginx `limit_conn` keyed by `$binary_remote_addr` in a
   * zone per Ingress); one more is answered 503, nginx's `limit_conn_status`. Absent: no cap.
   */
  readonly clientConcurrency?: ClientConcurrency;
  /** Responses with these codes replaced by an error backend's (model/error-pages.ts); absent: not. */
  readonly errorPages?: RouteErrorPages;
}

/** A cap on one client's requests in flight, shared by the routes that name the same zone. */
export interface ClientConcurrency {
  /** The counting scope: the source object's name (`ingress/<ns>/<name>`): one count per client there. */
  readonly zone: string;
  /**
   * Requests in flight per client address; a whole number. 0: the setting could not be read, and every
   * request is refused (a cap that cannot be enforced fails closed).
   */
  readonly limit: number;
  /**
   * Clients (IPv4/IPv6 CIDRs) neither counted nor capped (ingress-nginx `limit-allowlist`, which exempts
   * from limit-connections as from limit-rps/rpm). Absent: none.
   */
  readonly exemptCIDRs?: readonly string[];
}

/** Conditions on a request; all present conditions must hold. */
export interface RouteMatch {
  /** Path condition, on the normalised path (no query). */
  readonly path: PathMatch;
  /** HTTP method (upper-case), if restricted. */
  readonly method?: string;
  /** Header conditions; names lower-case. */
  readonly headers: readonly HeaderMatch[];
  /** Query parameter conditions; names case-sensitive. */
  readonly queryParams: readonly QueryParamMatch[];
}

/**
 * A condition on the request path.
 * - `Exact`: the path equals `value` (case-sensitive, trailing slash significant).
 * - `Prefix`: element-wise prefix: `/foo` matches `/foo`, `/foo/` and `/foo/bar`, never `/foobar`;
 *   a trailing slash in `value` is ignored (`/foo/` behaves as `/foo`).
 * - `RegularExpression`: `value` must match the whole path (anchored), evaluated by a linear-time engine.
 */
export interface PathMatch {
  /**
   * How `value` is compared. Ingress `Prefix` and `ImplementationSpecific` both become `Prefix`
   * (src/translate/ingress/paths.ts); Gateway API `PathPrefix` becomes `Prefix`.
   */
  readonly type: "Exact" | "Prefix" | "RegularExpression";
  /**
   * The path or pattern. `Exact` and `Prefix` values start with `/` and were checked by the translator
   * as the API server does (no `//`, `/./`, `/../`, `%2f`); a `Prefix` arrives with its trailing slash
   * already dropped (`/` stays `/`). A `RegularExpression` was checked to be safe for a linear-time engine.
   */
  readonly value: string;
  /** A `RegularExpression` compared case-insensitively (ingress-nginx's `~*` regex paths). */
  readonly ignoreCase?: boolean;
}

/** A header condition. `Exact` compares the value case-sensitively; `RegularExpression` is anchored. */
export interface HeaderMatch {
  /** How `value` is compared; Gateway API's default `Exact` when the route gave no type. */
  readonly type: "Exact" | "RegularExpression";
  /** Lower-case header name; when a rule names one header twice, only the first condition is kept. */
  readonly name: string;
  /**
   * The value to equal (never empty), or the pattern the whole value must match. A header the request
   * lacks never matches, whatever the pattern.
   */
  readonly value: string;
}

/** A query parameter condition; the first value of the parameter is compared. */
export interface QueryParamMatch {
  /** How `value` is compared; Gateway API's default `Exact` when the route gave no type. */
  readonly type: "Exact" | "RegularExpression";
  /** Parameter name, compared exactly (case-sensitive); a name given twice in a rule keeps the first. */
  readonly name: string;
  /**
   * The value to equal (never empty), or the pattern the whole value must match; compared with the
   * form-decoded first value. A parameter the request lacks never matches.
   */
  readonly value: string;
}

/** What answers a request once a route matched. */
export type RouteAction = ForwardAction | RedirectAction | DirectResponseAction;

/** Proxy to one of the weighted backends. */
export interface ForwardAction {
  /** Discriminant of `RouteAction`. */
  readonly kind: "Forward";
  /** Candidates; one is picked per request by weight. A backend with weight 0 is never picked. */
  readonly backends: readonly WeightedBackend[];
  /** How an endpoint of the picked backend is chosen, and sessions pinned (balancing.ts); absent: round robin. */
  readonly balancing?: Balancing;
}

/**
 * Answer with a redirect built from the request (Gateway API RequestRedirect, ingress-nginx ssl-redirect,
 * app-root, from-to-www-redirect), or with a literal URL (ingress-nginx permanent-/temporal-redirect).
 */
export interface RedirectAction {
  /** Discriminant of `RouteAction`. */
  readonly kind: "Redirect";
  /** New scheme; absent keeps the request's. */
  readonly scheme?: "http" | "https";
  /** New host; absent keeps the request's host. */
  readonly hostname?: string;
  /**
   * New port; absent: the new scheme's well-known port when `scheme` is set, else the listener's port
   * (the model's, never a remapped bound port). Left out of `Location` when it is the scheme's default.
   */
  readonly port?: number;
  /** New path; absent keeps the request's path. The query string is always kept. */
  readonly path?: PathModifier;
  /**
   * Drop one trailing `/` from the path and query as they end up in `Location` (`/a/` → `/a`, `/` → nothing,
   * `/a/?q=1` kept): ingress-nginx's ssl-redirect (unless `preserve-trailing-slash`) and www redirects do
   * so to nginx's `$request_uri`. Absent: kept.
   */
  readonly stripTrailingSlash?: boolean;
  /** Name the port in `Location` even when it is the scheme's default (ingress-nginx use-port-in-redirects). */
  readonly writeDefaultPort?: boolean;
  /**
   * The whole `Location`, as written, when set: an absolute http(s) URL in which the variables of
   * location-template.ts (`$request_uri`, `$host`, …) are filled from the request; every other field but
   * `statusCode` is then unused and the query is not added (nginx's `return <code> <url>`).
   */
  readonly location?: string;
  /** 301, 302, 303, 307 or 308: Gateway API defaults to 302; the ingress-nginx ssl-redirect uses 308. */
  readonly statusCode: number;
}

/** Answer directly without contacting a backend (e.g. 500 when every backend weight is 0). */
export interface DirectResponseAction {
  /** Discriminant of `RouteAction`. */
  readonly kind: "DirectResponse";
  /** HTTP status sent; the translator sets 500 for a rule with no backend weight above 0. */
  readonly status: number;
  /** The body; absent: an empty body. */
  readonly body?: string;
  /** The body's media type; absent: `text/plain; charset=utf-8`. */
  readonly contentType?: string;
}

/** A backend chosen by weight, with filters that apply only when it is picked. */
export interface WeightedBackend {
  /** Key into `GatewayModel.backends`. */
  readonly backendId: string;
  /** Relative weight, >= 0. */
  readonly weight: number;
  /** Filters applied only for requests sent to this backend. */
  readonly filters: readonly Filter[];
  /**
   * Gateway API invalid reference (kind other than Service, cross-namespace without a ReferenceGrant,
   * Service or port not found, unsupported appProtocol): a request that picks this entry (by weight, like
   * any other) is answered with this status (500, as the Gateway API requires) and never forwarded.
   * `backendId` then only names the reference for logs and is not looked up in `GatewayModel.backends`.
   * Absent for valid references; a valid backend with no ready endpoints still answers 503 via `problem`.
   */
  readonly failStatus?: number;
}

/**
 * A route's custom error pages (ingress-nginx `custom-http-errors` with `default-backend`): a response
 * with one of `codes` is replaced by the answer of an error backend, asked as ingress-nginx's
 * `@custom_<upstream>_<code>` location asks it (nginx.tmpl): the request's method, path `/`, no body, the
 * client's Host, and X-Code, X-Format (the client's Accept), X-Original-URI, X-Namespace,
 * X-Ingress-Name, X-Service-Name, X-Service-Port, X-Request-ID. That answer, status and body, goes to the
 * client unchanged ("NGINX does not change the response from the custom default backend"); when the
 * error backend cannot answer, the gateway's own error for the code does.
 */
export interface RouteErrorPages {
  /** Status codes replaced, 400–599, ascending, no repeats. */
  readonly codes: readonly number[];
  /** The error backend (a Service port in the model's backends). */
  readonly backendId: string;
  /**
   * Backend responses with those codes are replaced too (nginx's `proxy_intercept_errors on`, which
   * `custom-http-errors` turns on); false (`disable-proxy-intercept-errors`): only the gateway's own.
   */
  readonly upstream: boolean;
  /** The X-Namespace, X-Ingress-Name, X-Service-Name and X-Service-Port values ("" when not one). */
  readonly namespace: string;
  readonly ingressName: string;
  readonly serviceName: string;
  readonly servicePort: string;
}
