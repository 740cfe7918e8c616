/**
 * Access controls a route asks for: authentication and authorization (AuthPolicy; docs/auth.md), client
 * address lists, and the web application firewall (ingress-nginx `enable-modsecurity`; docs/waf.md).
 */
import type { SourceRef } from "./source.ts";

/**
 * Authentication and authorization for a route, from the one AuthPolicy that won attachment (the most
 * specific target; ties to the oldest). The data plane verifies before any filter runs and builds one
 * immutable identity from the verified claims. See docs/auth.md.
 */
export interface RouteAuth {
  /** The AuthPolicy this came from (logs, metrics, the `realm` of `WWW-Authenticate`). */
  readonly policy: SourceRef;
  /**
   * Set when the policy cannot be enforced as written (no provider, unusable Secret, a discovery or key
   * setting we refuse): every request to the route is answered 401. Fail closed, never open.
   */
  readonly failClosed?: string;
  /** Bearer tokens (JWT) checked against these providers; absent when the policy has only OIDC. */
  readonly jwt?: JWTAuth;
  /** Browser login (authorization code + PKCE) with an encrypted session cookie. */
  readonly oidc?: OIDCAuth;
  /** Basic authentication against an htpasswd user table (RFC 7617). */
  readonly basic?: BasicAuth;
  /** API keys from Secrets, read from a header or a query parameter. */
  readonly apiKeys?: APIKeyAuth;
  /** A sub-request to an authorization service decides (forward auth), after any credential check. */
  readonly external?: ExternalAuth;
  /**
   * `Any` (ingress-nginx `satisfy: any`, AuthPolicy `satisfy: Any`): a client address that every allow list
   * of the route admits (at least one list has one, and no deny list names it) is served without
   * credentials; any other address must authenticate, and without credentials gets the 401 challenge, not
   * the lists' 403. Deny lists refuse whatever the credentials (nginx would let credentials pass them).
   * Absent: `All`, every guard must pass. A policy that fails closed ignores it.
   */
  readonly satisfy?: "Any";
  /** Rules on the verified identity; failing one answers 403. */
  readonly authorization: AuthorizationRules;
  /**
   * Claims copied to request headers sent upstream. Incoming headers with these names are always removed
   * first, so a client can never supply them. Names lower-case.
   */
  readonly claimToHeaders: readonly ClaimToHeader[];
}

/** Where a bearer token is read from, in order; the first source present is used (and only it). */
export type TokenSource =
  | {
      /** A request header. */
      readonly type: "Header";
      /** Lower-case header name. */
      readonly name: string;
      /**
       * Scheme prefix the value must start with (compared case-insensitively), stripped before
       * verifying; `Bearer ` by default for `authorization`, "" (the whole value) for other headers.
       */
      readonly prefix: string;
    }
  | {
      /** A cookie. */
      readonly type: "Cookie";
      /** Cookie name, compared exactly. */
      readonly name: string;
    }
  | {
      /** A query parameter; never a default source, only when the policy lists it. */
      readonly type: "QueryParameter";
      /** Parameter name, compared exactly. */
      readonly name: string;
    };

/** Bearer-token (JWT) verification for a route. */
export interface JWTAuth {
  /** A token is verified by the provider whose `issuer` equals its `iss` claim. */
  readonly providers: readonly JWTProvider[];
  /** Default: `Authorization: Bearer …` only. Query parameters only when asked for. */
  readonly tokenSources: readonly TokenSource[];
}

/** Where a provider's public keys come from. URLs only ever come from here, never from a token. */
export type KeySource =
  /** A JWKS document at this URL, fetched at start and refreshed in the background. */
  | {
      /** Discriminant of `KeySource`. */
      readonly type: "RemoteJWKS";
      /** The JWKS URL, from the policy (never from a token). */
      readonly url: string;
    }
  /** `jwks_uri` of `<issuer>/.well-known/openid-configuration`, whose `issuer` must equal ours exactly. */
  | {
      /** Discriminant of `KeySource`. */
      readonly type: "Discovery";
    }
  /** A JWKS JSON document read from a Secret (public keys only). */
  | {
      /** Discriminant of `KeySource`. */
      readonly type: "Inline";
      /** The JWKS JSON text as read from the Secret. */
      readonly jwks: string;
    };

/** One issuer whose tokens a route accepts, and how its signatures are checked. */
export interface JWTProvider {
  /** Name within the policy (logs). */
  readonly name: string;
  /** Exact `iss` required. */
  readonly issuer: string;
  /** One of these must appear in `aud`; empty only when `audienceCheck` is false. */
  readonly audiences: readonly string[];
  /** False only when the policy explicitly turned the audience check off. */
  readonly audienceCheck: boolean;
  /** Where the issuer's public keys come from. */
  readonly keys: KeySource;
  /** Accepted `alg` values; asymmetric ones only (RS*, PS*, ES*, EdDSA). */
  readonly algorithms: readonly string[];
  /** Tolerance for `exp` and `nbf`, in seconds (default 30). */
  readonly clockSkewSeconds: number;
}

/** OpenID Connect authorization code flow with PKCE, state and nonce; keys found by discovery. */
export interface OIDCAuth {
  /** Exact issuer; the discovery document must name the same. */
  readonly issuer: string;
  /** OAuth client id registered at the provider; also a required `aud` of the ID token. */
  readonly clientId: string;
  /** Redacted by `dumpModel`. */
  readonly clientSecret: string;
  /** Absolute callback URL registered at the provider; its path is answered by the gateway. */
  readonly redirectURL: string;
  /** Path that ends the session (and the provider's, when it offers RP-initiated logout). */
  readonly logoutPath: string;
  /** Where to send the browser after logout; absent: `/` on the same host. */
  readonly postLogoutRedirectURL?: string;
  /** Scopes asked for; always includes `openid`. */
  readonly scopes: readonly string[];
  /** Session cookie name, derived from issuer, client and cookie domain so routes sharing them share it. */
  readonly cookieName: string;
  /** Cookie `Domain`; absent: host-only. */
  readonly cookieDomain?: string;
  /** 32-byte key (base64) sealing the session cookie (JWE dir + A256GCM). Redacted by `dumpModel`. */
  readonly sessionKey: string;
  /** Accepted ID token `alg` values, asymmetric only. */
  readonly algorithms: readonly string[];
  /** Tolerance for the ID token's `exp` and `nbf`, in seconds (default 30). */
  readonly clockSkewSeconds: number;
}

/** Checks on the verified identity after authentication; empty lists check nothing. */
export interface AuthorizationRules {
  /** Every scope listed must be granted (`scope` string or `scp`). */
  readonly requiredScopes: readonly string[];
  /** Each claim (dotted path for nested ones) must equal, or contain, one of its values. */
  readonly requiredClaims: readonly {
    /** Claim name; a dotted path (`realm.roles`) reads nested objects. */
    readonly name: string;
    /** Accepted values: the claim must equal one, or (an array claim) contain one. */
    readonly values: readonly string[];
  }[];
}

/** One verified claim passed upstream as a request header. */
export interface ClaimToHeader {
  /** Claim name (dotted path for nested ones); arrays are joined with `,`. */
  readonly claim: string;
  /** Lower-case header name. */
  readonly header: string;
}

/**
 * One pair of client address lists a route is guarded by (AuthPolicy `ipAllowList`/`ipDenyList`, ingress-nginx
 * `allowlist-source-range`/`whitelist-source-range`/`denylist-source-range`). Checked on the client address
 * before authentication, in nginx's order: an address in `deny` is refused; then, when `allow` is not empty,
 * an address outside it is refused. A refusal is a 403 with a problem+json body. Entries are IPv4 or IPv6
 * CIDRs or bare addresses (a /32 or /128), as written and checked by translation (model/ip-ranges.ts);
 * an IPv4-mapped IPv6 client (`::ffff:a.b.c.d`) is matched as the IPv4 address it carries.
 */
export interface IPAccessList {
  /** The AuthPolicy or Ingress the lists come from (logs, the model dump). */
  readonly source: SourceRef;
  /** Only these may pass; empty: every address not denied. */
  readonly allow: readonly string[];
  /** These never pass, whatever `allow` says. */
  readonly deny: readonly string[];
  /** Set when the lists could not be read as written: every request is refused (never open). */
  readonly invalid?: string;
}

/**
 * Basic authentication: `Authorization: Basic …` checked against an htpasswd table. A request that
 * carries other credentials the route accepts (a bearer token, an API key) is checked by those instead.
 */
export interface BasicAuth {
  /** The `realm` of `WWW-Authenticate: Basic` (ingress-nginx `auth-realm`). */
  readonly realm: string;
  /**
   * Users in file order (the first line of a name wins, as nginx reads the file). Lines that could not be
   * read, and hashes of a scheme Gatehouse does not verify, are left out (reported at translate).
   */
  readonly users: readonly BasicUser[];
  /** Lower-case header the verified user name is sent upstream in (a client's own is always removed). */
  readonly usernameHeader?: string;
}

/** One htpasswd entry. */
export interface BasicUser {
  readonly name: string;
  /** bcrypt (`$2y$`/`$2a$`/`$2b$`), `$apr1$`, `{SHA}` or `{SSHA}`, as htpasswd writes it. Redacted by `dumpModel`. */
  readonly passwordHash: string;
}

/** Where an API key is read from; the first source present is the one checked. */
export type APIKeySource =
  | {
      /** A request header. */
      readonly type: "Header";
      /** Lower-case header name. */
      readonly name: string;
    }
  | {
      /** A query parameter. */
      readonly type: "QueryParameter";
      /** Parameter name, compared exactly. */
      readonly name: string;
    };

/** API keys: each key has a name (the Secret data key), which identifies the client upstream. */
export interface APIKeyAuth {
  readonly sources: readonly APIKeySource[];
  /** SHA-256 (base64) of each accepted key; the keys themselves are not in the model. */
  readonly keys: readonly APIKey[];
  /** Lower-case header the key's name is sent upstream in (a client's own is always removed). */
  readonly clientIDHeader: string;
  /** The key is removed from the request sent upstream: key headers always, the query parameter it came in. */
  readonly sanitize: boolean;
}

/** One accepted API key. */
export interface APIKey {
  /** The client's name: the key of the Secret's data entry. */
  readonly name: string;
  /** SHA-256 of the key, base64. Redacted by `dumpModel`. */
  readonly keyDigest: string;
}

/**
 * Forward authentication (ingress-nginx `auth-url` and friends, AuthPolicy `spec.externalAuth`): before the
 * backend, a request without body to `url` carrying the client's headers and the original URL, method and
 * address. 2xx admits (its `responseHeaders` copied onto the upstream request); 401 and 403 go back to the
 * client (a 401 becomes a 302 to `signinURL` when set); anything else, a redirect included, and a timeout
 * fail closed. Templates hold nginx variables (model/location-template.ts), filled per request.
 */
export interface ExternalAuth {
  /** Absolute http(s) URL of the service; a template (AUTH_VARIABLES). */
  readonly url: string;
  /** The method sent; absent: GET, as nginx's auth_request (X-Original-Method names the client's). */
  readonly method?: string;
  /** Where a 401 sends the browser (a template); `?<redirectParam>=<original URL>` is added unless present. */
  readonly signinURL?: string;
  /** Query parameter of the sign-in URL naming the page to return to (default `rd`). */
  readonly signinRedirectParam: string;
  /** Lower-case names copied from the service's 2xx answer onto the upstream request (a client's own removed). */
  readonly responseHeaders: readonly string[];
  /** X-Auth-Request-Redirect sent to the service (a template); absent: the request URI. */
  readonly requestRedirect?: string;
  /** Pass the service's Set-Cookie to the client on every answer, refusals included (default: admitted only). */
  readonly alwaysSetCookie: boolean;
  /** The whole sub-request, connection included. */
  readonly timeoutMs: number;
  /** Keep answers by a key for a while (ingress-nginx auth-cache-key / auth-cache-duration). */
  readonly cache?: ExternalAuthCache;
}

/** Which of the service's answers are kept, by what key, for how long. */
export interface ExternalAuthCache {
  /** A template (AUTH_CACHE_VARIABLES), e.g. `$cookie__oauth2_proxy` or `$http_authorization`. */
  readonly key: string;
  /** Statuses kept, each for its own time (nginx `proxy_cache_valid`): status → seconds. */
  readonly seconds: Readonly<Record<string, number>>;
}

/**
 * A route's WAF: ModSecurity v3 (libmodsecurity3) with the OWASP Core Rule Set as Debian ships it. Every
 * field is structured: the gateway writes the ModSecurity directives itself (src/waf/directives.ts) and
 * never takes rule text from users (SecRule can run programs with `exec:` and switch the engine off with
 * `ctl:`). The request line, headers and the first `requestBodyLimitBytes` of the body are inspected;
 * responses are not.
 */
export interface RouteWaf {
  /** The object the WAF came from (a WAFPolicy, or an Ingress for its annotations), for logs and statuses. */
  readonly source: SourceRef;
  /** Log name of that object: `wafpolicy/<ns>/<name>` or `ingress/<ns>/<name>`. */
  readonly policy: string;
  /** `Enforce`: act on the engine's intervention; `DetectionOnly`: log and count it, pass the request. */
  readonly mode: "Enforce" | "DetectionOnly";
  /** Load the OWASP Core Rule Set; `false`: only the gateway's base rules (body parse errors). */
  readonly coreRuleSet: boolean;
  /** CRS paranoia level, 1 (few false positives) to 4. */
  readonly paranoiaLevel: 1 | 2 | 3 | 4;
  /** CRS inbound anomaly score at which a request is blocked (CRS default 5). */
  readonly inboundAnomalyThreshold: number;
  /** CRS rules removed by ID (`SecRuleRemoveById`), whole numbers. */
  readonly excludedRuleIds: readonly number[];
  /** CRS rules removed by tag (`SecRuleRemoveByTag`), e.g. `attack-sqli`; letters, digits and `_./:-`. */
  readonly excludedRuleTags: readonly string[];
  /** Request body bytes inspected, at most. */
  readonly requestBodyLimitBytes: number;
  /**
   * Arguments (query and body parameters) a request may carry; more are refused with 400 before any CRS
   * rule runs (the rules cost time per argument).
   */
  readonly maxArguments: number;
  /**
   * A body longer than `requestBodyLimitBytes`: `InspectPartial` inspects the first bytes and forwards the
   * whole body; `Reject` answers 413.
   */
  readonly requestBodyOverLimit: "InspectPartial" | "Reject";
  /**
   * The request header whose value names the engine's transaction in logs (ingress-nginx
   * `modsecurity-transaction-id`, `$request_id` → `x-request-id`); absent: a generated id.
   */
  readonly transactionIdHeader?: string;
  /**
   * Set when the WAF cannot be enforced as written: why. Such a WAF still attaches where a valid one
   * would (never open): every request on its routes is answered 503 and none is forwarded.
   */
  readonly invalid?: string;
}
