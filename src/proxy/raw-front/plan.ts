/**
 * Which routes the raw-socket front serves itself (the fast path) and which go through `handleRequest`
 * with real Request/Response objects. Fast: a Forward whose every backend choice is an HTTP/1.1 backend
 * (in cleartext, or TLS checked by name: docs/http.md "TLS to backends") with endpoints, no invalid
 * reference, and only filters the fast path implements (header modifiers, URL rewrite, response rewrite,
 * CORS: dispatch.ts answers its preflights), on a route whose guards all run here too: client address
 * lists, token authentication and OIDC sessions (dispatch.ts relays OIDC's login flow, which needs the Request), rate
 * limits and the WAF (guarded-exchange.ts holds the body it inspects), but then no CORS filter (its
 * preflights skip authentication, which guards.ts decides), and no error pages. Decided once per
 * compiled route (a reload compiles new route objects, so the cache never goes stale). Redirects and
 * direct responses are not forwarded at all: fixed-answer.ts answers them on routes without guards.
 */
import type { Filter } from "../../model/index.ts";
import { needsGuards } from "../request/guards.ts";
import type { CompiledRoute } from "../table.ts";

const FAST_FILTERS: ReadonlySet<Filter["kind"]> = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "URLRewrite",
  "ResponseRewrite",
  "CORS",
]);

const cache = new WeakMap<CompiledRoute, boolean>();

export function isFastRoute(route: CompiledRoute): boolean {
  let fast = cache.get(route);
  if (fast === undefined) {
    fast = decide(route);
    cache.set(route, fast);
  }
  return fast;
}

function decide(route: CompiledRoute): boolean {
  const a = route.action;
  if (a.kind !== "Forward" || a.choices.length === 0) return false;
  // Replacing a response by an error backend's needs the whole response path (error-pages/replace.ts).
  if (route.errorPages !== undefined) return false;
  if (needsGuards(route)) {
    // A preflight skips authentication and rate limits (guards.ts), which edge-guards.ts does not know.
    if (route.cors || a.choices.some((c) => c.filters.cors)) return false;
    // OIDC routes too: dispatch.ts sends only the login flow to the full path (AuthEnforcer.needsRequest).
  }
  return a.choices.every(
    (c) =>
      c.failStatus === undefined &&
      c.backend !== undefined &&
      c.backend.bases.length > 0 &&
      // Activated backends count their requests for the scale-down on the full path (handler.ts).
      c.backend.activation === undefined &&
      !c.backend.h2c &&
      // Bun.connect has no checkServerIdentity: subjectAltNames are checked on the full request path.
      c.backend.tls?.fetch.checkServerIdentity === undefined &&
      c.filters.error === undefined &&
      c.filters.kinds.every((k) => FAST_FILTERS.has(k)),
  );
}
