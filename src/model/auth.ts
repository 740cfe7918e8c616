/** Authentication and authorization a route asks for (AuthPolicy; docs/auth.md). */
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
