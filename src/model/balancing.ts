/**
 * How a forward picks the endpoint of the backend it chose, and how it pins a client to one (sessions).
 * One field on the Forward action (`ForwardAction.balancing`); absent: round robin, no session.
 */

/** The endpoint choice within a backend, and the session pinning, for one route's forwards. */
export interface Balancing {
  /**
   * - `RoundRobin`: in turn (the default; `load-balance: round_robin`).
   * - `LeastRequest`: of two endpoints drawn at random, the one with fewer requests in flight (waiting
   *   for response headers) from this process.
   * - `ConsistentHash`: `hashKey` on a ring of endpoints, so a key keeps its endpoint and an endpoint
   *   that joins or leaves moves only its share of keys (`upstream-hash-by`).
   * - `EWMA`: of two endpoints drawn at random, the one with the lower moving average of response-header
   *   time, decaying over 10 s (ingress-nginx `load-balance: ewma`).
   */
  readonly algorithm: "RoundRobin" | "LeastRequest" | "ConsistentHash" | "EWMA";
  /** `ConsistentHash` only: the key, its parts joined (a part the request lacks adds nothing). */
  readonly hashKey?: readonly HashKeyPart[];
  /**
   * `ConsistentHash` only: the key picks a subset of this many endpoints (the endpoints in order, cut into
   * groups, the last one filled up from the first endpoints), and the request goes to one of them at
   * random (ingress-nginx `upstream-hash-by-subset`). Absent: the key picks one endpoint.
   */
  readonly hashSubsetSize?: number;
  /** Pin each client to an endpoint (the algorithm picks only for clients not yet pinned). */
  readonly session?: SessionPersistence;
}

/** One piece of a hash key: literal text, or a value of the request. */
export type HashKeyPart =
  | { readonly kind: "Text"; readonly value: string }
  /** A request header's value (repeated fields joined with `, `); `name` lower-case. */
  | { readonly kind: "Header"; readonly name: string }
  /** A cookie's value (the first of that name). */
  | { readonly kind: "Cookie"; readonly name: string }
  /** A query parameter's raw value (the first of that name). */
  | { readonly kind: "Query"; readonly name: string }
  /** The client's address (the one the gateway logs: X-Forwarded-For only from trusted proxies). */
  | { readonly kind: "ClientIP" }
  /** The request's path and query as routed (nginx `$request_uri`, normalised). */
  | { readonly kind: "RequestURI" };

/**
 * Session persistence: the endpoint is named by a token the gateway hands out (a cookie, or a response
 * header the client sends back). The token is a hash of the endpoint's address and port, looked up only
 * among the route's own endpoints: a forged one can at most pick another endpoint the route serves, and
 * every replica (and a restarted one) reads it the same way. A token naming no current endpoint counts
 * as absent: an endpoint is picked and a new token issued. With a timeout the token also carries
 * HMAC-signed timestamps, and one that fails verification or has ended counts as absent too. A pinned client stays pinned while its
 * endpoint is there (ingress-nginx's `affinity-mode: balanced` rehashes some on a scale-up; not here).
 */
export interface SessionPersistence {
  /** `Cookie` (Set-Cookie / Cookie) or `Header` (the same header name both ways). */
  readonly type: "Cookie" | "Header";
  /** The cookie or header name. */
  readonly name: string;
  /** Cookie only: its attributes as sent in Set-Cookie. */
  readonly cookie?: SessionCookie;
  /** A failed attempt moves the client: the retry picks another endpoint and reissues the token. */
  readonly changeOnFailure?: boolean;
  /**
   * The session ends this long after it began, whatever the activity (GEP-1619 `absoluteTimeout`);
   * then the next request is balanced anew and gets a new token. With either timeout the token carries
   * signed timestamps (proxy/balancing/timed-token.ts).
   */
  readonly absoluteTimeoutMs?: number;
  /** The session ends this long after its last request (GEP-1619 `idleTimeout`). */
  readonly idleTimeoutMs?: number;
}

/** Set-Cookie attributes of a session cookie. */
export interface SessionCookie {
  /** `Path`; absent: `/`. */
  readonly path?: string;
  /** `Domain`; absent: none (the host only). */
  readonly domain?: string;
  /** `Max-Age` in seconds; absent: a session cookie (gone when the browser closes). */
  readonly maxAgeSeconds?: number;
  /** `Expires`, this many seconds after the response (ingress-nginx `session-cookie-expires`). */
  readonly expiresSeconds?: number;
  /** `SameSite`. */
  readonly sameSite?: "Strict" | "Lax" | "None";
  /** `SameSite=None` is left out for user agents known to mishandle it (ingress-nginx's list). */
  readonly conditionalSameSiteNone?: boolean;
  /** `Secure`. `HttpOnly` is always set: the cookie is for the gateway, not for scripts. */
  readonly secure?: boolean;
}
