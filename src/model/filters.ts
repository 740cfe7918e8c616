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
  | CORSFilter
  | ResponseRewriteFilter;

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

/**
 * Send a copy of the request to another backend or a URL and ignore its answer; it never delays or fails
 * the request. A body is copied when it was read whole before forwarding (a Content-Length up to
 * `--request-buffer-bytes`, to an HTTP/1.1 backend); a larger or chunked one, or one going to an h2c
 * backend, is streamed to the backend and not mirrored (the copy is not sent; counted in
 * `gatehouse_mirror_requests_total{outcome="skipped_streamed_body"}`).
 */
export interface RequestMirrorFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "RequestMirror";
  /** Key into `GatewayModel.backends`: the copy goes to its next endpoint (Gateway API). Else `url`. */
  readonly backendId?: string;
  /** Where the copy goes when `backendId` is absent (ingress-nginx `mirror-target`). */
  readonly url?: MirrorTarget;
  /**
   * Share of requests mirrored, 0–100 (fractions allowed; a Gateway API `fraction` is converted to a
   * percentage). 100 when the route gave neither.
   */
  readonly percent: number;
  /**
   * Host header of the copy (a host name with an optional port); absent: the request's own Host
   * (`backendId`) or `url`'s host name (as ingress-nginx's `mirror-host` default).
   */
  readonly host?: string;
  /** `false`: copies carry no body, sent with `Content-Length: 0` (ingress-nginx `mirror-request-body: off`). */
  readonly body?: false;
}

/** A URL a request copy is sent to: `scheme://hostname:port` then `path` filled per request. */
export interface MirrorTarget {
  readonly scheme: "http" | "https";
  /** Host name, IPv4 address or bracketed IPv6 address; certificates of `https` are verified against it
   * (or against the filter's `host`, sent as SNI, when set). */
  readonly hostname: string;
  readonly port: number;
  /**
   * Path and query: "" sends the request's own path and query; text without variables is sent with the
   * request's query appended; text with variables (MIRROR_VARIABLES in location-template.ts, e.g.
   * `/copy$request_uri`) is sent as filled, nothing appended.
   */
  readonly path: string;
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

/** A `from` → `to` replacement of a response header (or attribute) value; see ResponseRewriteFilter. */
export interface ValueReplacement {
  /** The text looked for (never empty). */
  readonly from: string;
  /** What is put in its place (may be empty). */
  readonly to: string;
}

/**
 * Rewrite the redirects and cookies of the upstream's answer (ingress-nginx `proxy-redirect-*` and
 * `proxy-cookie-*`, nginx's proxy_redirect, proxy_cookie_domain and proxy_cookie_path with plain text,
 * one rule each). Runs on every response the route sends, and changes nothing when no header matches.
 */
export interface ResponseRewriteFilter {
  /** Discriminant of `Filter`. */
  readonly kind: "ResponseRewrite";
  /**
   * A `Location` value, and the URL after the first `url=` (any case) of a `Refresh` value
   * (`5; url=http://…`), that starts with `from` (case-sensitive) gets `to` in place of that start.
   * Absent: both are passed on as they are.
   */
  readonly redirect?: ValueReplacement;
  /**
   * A `Set-Cookie` `Domain` attribute (name in any case) equal to `from`, compared case-insensitively
   * and ignoring one leading dot of the attribute (which is kept), becomes `to`. `from` and `to` have no
   * leading dot. Absent: domains are passed on as they are.
   */
  readonly cookieDomain?: ValueReplacement;
  /**
   * A `Set-Cookie` `Path` attribute (name in any case) that starts with `from` (case-sensitive) gets
   * `to` in place of that start. Absent: paths are passed on as they are. A cookie changed by either
   * rule is written back as nginx does: its parts trimmed of spaces and joined with `; `.
   */
  readonly cookiePath?: ValueReplacement;
}
