/**
 * Model filters and redirects as HTTPRoute filters, for what Gatehouse's HTTPRoute translation
 * (translate/gateway/httproute/filters.ts) turns back into the same model filter. What Gateway API has no
 * field for goes into an HTTPRouteFilter named by an ExtensionRef (`ext`, route-filters.ts); without
 * `ext` (`--portable`) it is left out with the reason pushed to `lost`.
 */
import type { Filter, GatewayModel, HeaderEdits, PathModifier, RedirectAction } from "../model/index.ts";
import { LEADING_IGNORE_CASE } from "../proxy/match/regex/regex.ts";
import { backendRefOf } from "./backend-refs.ts";
import type { IngressRouteFilters } from "./route-filters.ts";

type Json = Record<string, unknown>;

/** `filters` as HTTPRoute filters (in order), leaving out (into `lost`) what has no counterpart. */
export function convertFilters(
  filters: readonly Filter[],
  model: GatewayModel,
  routeNamespace: string,
  lost: string[],
  ext: IngressRouteFilters | undefined,
): Json[] {
  const out: Json[] = [];
  const seen = new Set<string>();
  for (const f of filters) {
    const converted = convertFilter(f, model, routeNamespace, lost, ext);
    if (converted === undefined) continue;
    const type = f.kind; // an ExtensionRef counts as the filter it stands for
    if (type !== "RequestMirror" && seen.has(type)) {
      lost.push(`a second ${type} filter (Gateway API allows one per rule)`);
      continue;
    }
    seen.add(type);
    out.push(converted);
  }
  return out;
}

function convertFilter(
  f: Filter,
  model: GatewayModel,
  ns: string,
  lost: string[],
  ext: IngressRouteFilters | undefined,
): Json | undefined {
  switch (f.kind) {
    case "RequestHeaderModifier":
      return { type: f.kind, requestHeaderModifier: headerModifier(f.edits) };
    case "ResponseHeaderModifier":
      return { type: f.kind, responseHeaderModifier: headerModifier(f.edits) };
    case "URLRewrite": {
      if (
        ext &&
        (f.path?.type === "RegexSubstitute" || (f.hostname !== undefined && !isHostname(f.hostname)))
      )
        return ext.ref("rewrite", {
          urlRewrite: {
            ...(f.hostname ? { hostname: f.hostname } : {}),
            ...(f.path
              ? { path: f.path.type === "RegexSubstitute" ? regexPath(f.path) : corePath(f.path) }
              : {}),
          },
        });
      if (f.hostname !== undefined && !isHostname(f.hostname)) {
        lost.push(`the upstream Host ${JSON.stringify(f.hostname)} (a Gateway API hostname has no port)`);
        if (!f.path) return undefined;
        return convertFilter({ kind: "URLRewrite", path: f.path }, model, ns, lost, ext);
      }
      const path = f.path ? pathModifier(f.path, "the upstream path rewrite", lost) : undefined;
      if (f.path && path === undefined)
        return f.hostname ? { type: f.kind, urlRewrite: { hostname: f.hostname } } : undefined;
      return {
        type: f.kind,
        urlRewrite: { ...(f.hostname ? { hostname: f.hostname } : {}), ...(path ? { path } : {}) },
      };
    }
    case "RequestMirror": {
      if (f.backendId === undefined) {
        const u = f.url;
        lost.push(
          `the request mirror to ${u ? `${u.scheme}://${u.hostname}:${u.port}${u.path}` : "a URL"} (Gateway API mirrors to Services only)`,
        );
        return undefined;
      }
      if (f.host !== undefined || f.body === false) {
        lost.push("the request mirror's Host or body setting (mirror-host, mirror-request-body)");
      }
      const ref = backendRefOf(f.backendId, model, ns);
      if (typeof ref === "string") {
        lost.push(`the request mirror: ${ref}`);
        return undefined;
      }
      return {
        type: f.kind,
        requestMirror: { backendRef: ref, ...(f.percent !== 100 ? { percent: f.percent } : {}) },
      };
    }
    case "CORS": {
      if (f.style === "IngressNginx" && ext)
        return ext.ref("cors", { cors: { ...corsBlock(f), behavior: f.style } });
      if (f.style === "IngressNginx")
        lost.push(
          "ingress-nginx's CORS behaviour (`*` sent with credentials, every OPTIONS answered, CORS headers on every response, `*` in an origin standing for one label): written as Gateway API's CORS filter, which differs in those points",
        );
      return { type: "CORS", cors: corsBlock(f) };
    }
    case "ResponseRewrite":
      if (ext)
        return ext.ref("response-rewrite", {
          responseRewrite: {
            ...(f.redirect ? { location: { ...f.redirect } } : {}),
            ...(f.cookieDomain ? { cookieDomain: { ...f.cookieDomain } } : {}),
            ...(f.cookiePath ? { cookiePath: { ...f.cookiePath } } : {}),
          },
        });
      lost.push(
        "the rewrite of response Location/Refresh and Set-Cookie domains and paths (proxy-redirect-*, proxy-cookie-*)",
      );
      return undefined;
  }
}

/** A CORS filter's fields as Gateway API writes them (HTTPRouteFilter's `cors` has the same ones). */
function corsBlock(f: Extract<Filter, { kind: "CORS" }>): Json {
  return {
    allowOrigins: [...f.allowOrigins],
    ...(f.allowMethods.length > 0 ? { allowMethods: [...f.allowMethods] } : {}),
    ...(f.allowHeaders.length > 0 ? { allowHeaders: [...f.allowHeaders] } : {}),
    ...(f.exposeHeaders.length > 0 ? { exposeHeaders: [...f.exposeHeaders] } : {}),
    ...(f.allowCredentials ? { allowCredentials: true } : {}),
    maxAge: f.maxAgeSeconds,
  };
}

/** A RegexSubstitute as HTTPRouteFilter's ReplaceRegexMatch (`(?i)` saying ignoreCase). */
function regexPath(p: PathModifier): Json {
  const pattern = `${p.ignoreCase ? LEADING_IGNORE_CASE : ""}${p.pattern ?? ""}`;
  return { type: "ReplaceRegexMatch", replaceRegexMatch: { pattern, substitution: p.value } };
}

function headerModifier(e: HeaderEdits): Json {
  return {
    ...(e.set.length > 0 ? { set: e.set.map((h) => ({ name: h.name, value: h.value })) } : {}),
    ...(e.add.length > 0 ? { add: e.add.map((h) => ({ name: h.name, value: h.value })) } : {}),
    ...(e.remove.length > 0 ? { remove: [...e.remove] } : {}),
  };
}

/** Whether Gateway API's RequestRedirect says all of `r` (a Location only as `<scheme>://<host>$request_uri`). */
function plainRedirect(r: RedirectAction): boolean {
  if (r.location !== undefined) return locationShape(r.location)?.[5] === "$request_uri";
  return !r.stripTrailingSlash && !r.writeDefaultPort && r.path?.type !== "RegexSubstitute";
}

function corePath(p: PathModifier): Json {
  return p.type === "ReplaceFullPath"
    ? { type: p.type, replaceFullPath: p.value }
    : { type: p.type, replacePrefixMatch: p.value };
}

/** A path modifier Gateway API has (ReplaceFullPath, ReplacePrefixMatch), else undefined and a reason. */
function pathModifier(p: PathModifier, what: string, lost: string[]): Json | undefined {
  if (p.type !== "RegexSubstitute") return corePath(p);
  lost.push(
    `${what} by regular expression (${JSON.stringify(p.pattern)} → ${JSON.stringify(p.value)}; Gateway API has no capture-group rewrite)`,
  );
  return undefined;
}

/**
 * A redirect action as a RequestRedirect filter; with `ext`, what that cannot say exactly makes it an
 * HTTPRouteFilter's `requestRedirect`, else it is left out (into `lost`).
 */
export function redirectFilter(
  r: RedirectAction,
  lost: string[],
  ext: IngressRouteFilters | undefined,
): Json {
  if (ext && !plainRedirect(r)) {
    const path =
      r.path?.type === "RegexSubstitute" ? regexPath(r.path) : r.path ? corePath(r.path) : undefined;
    return ext.ref("redirect", {
      requestRedirect:
        r.location !== undefined
          ? { location: r.location, statusCode: r.statusCode }
          : {
              ...(r.scheme ? { scheme: r.scheme } : {}),
              ...(r.hostname ? { hostname: r.hostname } : {}),
              ...(r.port !== undefined ? { port: r.port } : {}),
              ...(path ? { path } : {}),
              ...(r.stripTrailingSlash ? { stripTrailingSlash: true } : {}),
              ...(r.writeDefaultPort ? { includeDefaultPort: true } : {}),
              statusCode: r.statusCode,
            },
    });
  }
  if (r.location !== undefined) return locationFilter(r, r.location, lost);
  if (r.stripTrailingSlash)
    lost.push(
      "the redirect dropping a trailing slash (ingress-nginx's ssl-redirect and www redirects do; Gateway API keeps the path)",
    );
  if (r.writeDefaultPort) lost.push("naming the default port in redirects (use-port-in-redirects)");
  const path = r.path ? pathModifier(r.path, "the redirect path", lost) : undefined;
  return {
    type: "RequestRedirect",
    requestRedirect: {
      ...(r.scheme ? { scheme: r.scheme } : {}),
      ...(r.hostname ? { hostname: r.hostname } : {}),
      ...(r.port !== undefined ? { port: r.port } : {}),
      ...(path ? { path } : {}),
      statusCode: r.statusCode,
    },
  };
}

/**
 * A literal Location (permanent-/temporal-redirect, app-root) as a RequestRedirect, where its shape has
 * one: `<scheme>://<host>[:port]$request_uri` exactly (the request's path and query kept, as Gateway API
 * does), or with a literal path (written as ReplaceFullPath; Gateway API keeps the query, nginx's `return`
 * does not). `$scheme://$http_host` stands for the request's own scheme, host and port. Anything else is
 * lost, and the redirect keeps the request's URL.
 */
function locationFilter(r: RedirectAction, location: string, lost: string[]): Json {
  const m = locationShape(location);
  const rest = m?.[5] ?? "";
  const literalPath = /^\/[^$?#]*$/.test(rest);
  if (!m || (rest !== "$request_uri" && !literalPath)) {
    lost.push(
      `the redirect to ${JSON.stringify(location)} (only <scheme>://<host>$request_uri or a literal URL has a Gateway API counterpart): written as a redirect to the request's own URL`,
    );
    return { type: "RequestRedirect", requestRedirect: { statusCode: r.statusCode } };
  }
  if (literalPath)
    lost.push(`dropping the query in the redirect to ${JSON.stringify(location)} (Gateway API keeps it)`);
  return {
    type: "RequestRedirect",
    requestRedirect: {
      ...(m[1] ? { scheme: m[1].toLowerCase() } : {}),
      ...(m[2] ? { hostname: m[2].toLowerCase() } : {}),
      ...(m[4] ? { port: Number(m[4]) } : {}),
      ...(literalPath ? { path: { type: "ReplaceFullPath", replaceFullPath: rest } } : {}),
      statusCode: r.statusCode,
    },
  };
}

/** `<scheme>://<host>[:port]<rest>` taken apart: scheme, host, port (groups 1, 2, 4) and the rest (5). */
function locationShape(location: string): RegExpExecArray | null {
  return /^(?:(https?)|\$scheme):\/\/(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?::([0-9]{1,5}))?|\$http_host)(.*)$/i.exec(
    location,
  );
}

/** A host name URLRewrite takes: DNS labels, no port, no wildcard. */
function isHostname(host: string): boolean {
  return (
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i.test(host) && host.length <= 253
  );
}
