/**
 * The filters a route or one of its backends applies (Gateway API HTTPRoute filters, and what Ingress
 * annotations become), and the path modifiers rewrites and redirects share.
 */

/** How a path is replaced (redirects and rewrites). */
export interface PathModifier {
  /**
   * `ReplaceFullPath` replaces the whole path; `ReplacePrefixMatch` replaces the matched prefix only;
   * `RegexSubstitute` (ingress-nginx `rewrite-target`) replaces the whole path with `value`, its `$1`…`$9`
   * filled from `pattern`'s groups matched against the path.
   */
  readonly type: "ReplaceFullPath" | "ReplacePrefixMatch" | "RegexSubstitute";
  /**
   * The new path (`ReplaceFullPath`; "" becomes `/`) or the new prefix put in place of the route's
   * matched `Prefix` path, element-wise, never doubling or losing the `/` before the rest
   * (`/foo` → `/xyz/` on `/foo/bar` gives `/xyz/bar`). `ReplacePrefixMatch` is only accepted on rules
   * with exactly one `Prefix` path match.
   */
  readonly value: string;
  /** `RegexSubstitute` only: the pattern matched against the whole path (linear-time engine). */
  readonly pattern?: string;
  /** `RegexSubstitute` only: `pattern` compared case-insensitively. */
  readonly ignoreCase?: boolean;
}

/** Request and response transformations, applied in order. */
export type Filter =
  | RequestHeaderModifierFilter
  | ResponseHeaderModifierFilter
  | URLRewriteFilter
  | RequestMirrorFilter
  | CORSFilter;

/**
 * Header edits, applied as `set`, then `add`, then `remove`. Names are lower-case; when a list names a
 * header twice, the translator keeps only the first (the Gateway API rule).
 */
export interface HeaderEdits {
  /** Headers replaced (or created) with exactly this value. */
  readonly set: readonly {
    /** Lower-case header name. */
    readonly name: string;
    /** The whole new value. */
    readonly value: string;
  }[];
  /** Values appended to a header (`a,b` on one line; Set-Cookie stays separate lines), or it is created. */
  readonly add: readonly {
    /** Lower-case header name. */
    readonly name: string;
    /** The value appended. */
    readonly value: string;
  }[];
  /** Lower-case names of headers deleted, whatever their values. */
  readonly remove: readonly string[];
}

/** Edit the headers sent upstream. */
export interface RequestHeaderModifierFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "RequestHeaderModifier";
  /** The edits made to the request headers before forwarding. */
  readonly edits: HeaderEdits;
}

/** Edit the headers sent to the client. */
export interface ResponseHeaderModifierFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "ResponseHeaderModifier";
  /** The edits made to the upstream's response headers before they reach the client. */
  readonly edits: HeaderEdits;
}

/** Rewrite the Host and/or path sent upstream. */
export interface URLRewriteFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "URLRewrite";
  /** Host header sent upstream instead of the client's (which stays in X-Forwarded-Host); absent: kept. */
  readonly hostname?: string;
  /** New upstream path; absent: kept. The query string is always kept. */
  readonly path?: PathModifier;
}

/** Send a copy of the request to another backend and ignore its answer. */
export interface RequestMirrorFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "RequestMirror";
  /** Key into `GatewayModel.backends`. */
  readonly backendId: string;
  /**
   * Share of requests mirrored, 0–100 (fractions allowed; a Gateway API `fraction` is converted to a
   * percentage). 100 when the route gave neither. Requests with a body are never mirrored.
   */
  readonly percent: number;
}

/** Answer CORS preflights and decorate responses (Gateway API HTTPCORSFilter). */
export interface CORSFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "CORS";
  /**
   * Origins allowed, e.g. `https://app.example`: compared case-insensitively; one `*` inside a pattern
   * (`https://*.example`) stands for one or more host labels; `*` alone allows every origin. Empty:
   * none (preflights get a bare 204 and responses no CORS headers).
   */
  readonly allowOrigins: readonly string[];
  /** Methods sent in `Access-Control-Allow-Methods` on preflights; `*` allows any (echoed with credentials). */
  readonly allowMethods: readonly string[];
  /** Request headers a preflight may ask for; `*` allows any (the requested ones are echoed with credentials). */
  readonly allowHeaders: readonly string[];
  /** Response headers listed in `Access-Control-Expose-Headers`; empty: the header is not sent. */
  readonly exposeHeaders: readonly string[];
  /** Send `Access-Control-Allow-Credentials: true`; then `*` is never sent literally. False when not given. */
  readonly allowCredentials: boolean;
  /** `Access-Control-Max-Age` of preflight answers, in seconds; 5 when the route gave none (Gateway API). */
  readonly maxAgeSeconds: number;
  /**
   * `IngressNginx`: as ingress-nginx's `enable-cors` (annotations/cors.ts), where users rely on it:
   * `*` is sent as `*` even with credentials (never echoed), and also when the request has no Origin;
   * every OPTIONS from an allowed origin is answered 204 (not only those with
   * Access-Control-Request-Method); other responses carry the methods, headers and max-age too; a `*` in
   * a pattern stands for exactly one host label. Absent: the Gateway API filter.
   */
  readonly style?: "IngressNginx";
}
