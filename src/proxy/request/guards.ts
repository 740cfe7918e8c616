/**
 * Edge guards run after routing and before a route's filters and action, in the order the architecture
 * fixes: the client address lists (auth/ip-access.ts), authentication (one immutable identity), then rate
 * limiting (which may key on that identity's verified claims); a route's WAF runs last, in the action
 * handler.ts passes here (waf/request-check.ts), so what the others refuse costs no inspection. Routes without
 * guards never come here, so the plain forwarding path pays nothing for them. A route that asks for a guard the process does not
 * have fails closed (500), never open.
 */

import { addressGrant } from "../../auth/address-grant.ts";
import { CLIENT_CERT_HEADERS, checkClientCertificate } from "../../auth/client-certificate.ts";
import type { AuthEnforcer, RequestURL } from "../../auth/enforce.ts";
import type { Identity } from "../../auth/identity.ts";
import { IP_ALLOWED, IP_OUTSIDE, IP_PASSED, IP_REFUSED, ipRefused, ipVerdict } from "../../auth/ip-access.ts";
import { isOIDCPath } from "../../auth/oidc.ts";
import type { RouteAuth } from "../../model/index.ts";
import { limitedLog } from "../../observability/log-limit.ts";
import type { RateLimitEnforcer } from "../../ratelimit/enforce.ts";
import { normaliseHost } from "../match/host.ts";
import type { CompiledRoute, ListenerTable } from "../table.ts";
import type { RequestClient } from "./client-address.ts";
import { clientTls, connectionServername } from "./client-tls.ts";
import type { RequestTarget } from "./request-target.ts";
import { errorResponse } from "./responses.ts";

/** The guard engines of a process (one of each, shared by every listener). */
export interface EdgeGuards {
  readonly auth?: AuthEnforcer;
  readonly rateLimit?: RateLimitEnforcer;
}

/** True when the route asks for any guard; checked on the hot path, so it reads a few fields only. */
export function needsGuards(route: CompiledRoute): boolean {
  return (
    route.auth !== undefined ||
    route.rateLimit !== undefined ||
    route.ipAccess !== undefined ||
    route.clientCertificate !== undefined ||
    route.waf !== undefined
  );
}

/**
 * A CORS preflight carries no credentials by design (browsers strip them), so on a route whose every
 * request passes a CORS filter it is answered by that filter without authentication or rate limits.
 * Only what the filter itself answers (OPTIONS with Origin and Access-Control-Request-Method, cors.ts):
 * anything else would be forwarded, so it meets the guards like any request.
 */
function isPreflight(req: Request, route: CompiledRoute): boolean {
  return (
    route.cors &&
    req.method === "OPTIONS" &&
    req.headers.has("origin") &&
    req.headers.has("access-control-request-method")
  );
}

function isLoginPath(auth: RouteAuth, url: RequestURL): boolean {
  return auth.oidc !== undefined && isOIDCPath(auth.oidc, url);
}

export async function guarded(
  req: Request,
  route: CompiledRoute,
  target: RequestTarget,
  table: ListenerTable,
  guards: EdgeGuards | undefined,
  serverHeader: string,
  /** Who sent the request: `client` for every guard, `peer` for a rate limit's own trusted proxies (asked only when needed). */
  who: () => RequestClient,
  /** `upstream`: the target to send (the client's, unless authentication took an API key out of its query). */
  action: (identity: Identity | undefined, upstream: RequestTarget) => Response | Promise<Response>,
): Promise<Response> {
  // First, preflights included: a refused address gets nothing of the route.
  const verdict = route.ipAccess === undefined ? IP_PASSED : ipVerdict(route.ipAccess, who().client);
  if (verdict === IP_REFUSED || (verdict === IP_OUTSIDE && !route.addressGrants))
    return ipRefused(serverHeader);
  if (route.clientCertificate !== undefined) {
    // The raw front relays its session; node:http2 only its SNI name; Bun.serve nothing ("unknown": only
    // what needs no check passes).
    const sni = connectionServername(req);
    const view =
      clientTls(req) ??
      (table.protocol !== "HTTPS"
        ? undefined
        : sni !== undefined
          ? { servername: sni, unseen: true as const }
          : "unknown");
    // The host routing used (handler.ts): on the relayed path the front put its routed host in Host.
    const host = normaliseHost(req.headers.get("host"));
    const checked = checkClientCertificate(route.clientCertificate, view, host, serverHeader);
    if (!checked.ok) return checked.response;
    for (const name of CLIENT_CERT_HEADERS) req.headers.delete(name);
    for (const [name, value] of checked.set) req.headers.set(name, value);
  }
  if (isPreflight(req, route)) return action(undefined, target);
  let identity: Identity | undefined;
  let upstream = target;
  let responseHeaders: readonly (readonly [string, string])[] | undefined;
  if (route.auth !== undefined) {
    if (guards?.auth === undefined) {
      limitedLog("error", route.name, "route requires authentication but no enforcer runs", {
        route: route.name,
      });
      return errorResponse(500, serverHeader);
    }
    const url = {
      path: target.path,
      query: target.query.length > 0 ? target.query.slice(1) : "",
      host: req.headers.get("host") ?? "",
      scheme: table.scheme,
    };
    // Let in by address (satisfy: Any), except on the OIDC login's own paths, which stay the login's.
    const outcome =
      verdict === IP_ALLOWED && route.addressGrants && !isLoginPath(route.auth, url)
        ? addressGrant(route.auth, url.query)
        : await guards.auth.check(route.auth, req, url);
    if (!outcome.ok) return outcome.response;
    // Forward authentication last, on the client's own headers (before this request's edits).
    const external = route.auth.external;
    const forward =
      external === undefined || outcome.identity.via === "address" || route.auth.failClosed !== undefined
        ? undefined
        : await guards.auth.forward.check(
            external,
            {
              route: route.name,
              method: req.method,
              scheme: table.scheme,
              host: normaliseHost(req.headers.get("host")),
              port: table.port,
              path: target.path,
              query: target.query,
              clientIp: who().client,
              headers: req.headers,
            },
            `${route.auth.policy.namespace}/${route.auth.policy.name}`,
          );
    if (forward?.ok === false) return forward.response;
    for (const name of outcome.removeHeaders) req.headers.delete(name);
    for (const [name, value] of outcome.setHeaders) req.headers.set(name, value);
    if (forward !== undefined) {
      for (const name of forward.removeHeaders) req.headers.delete(name);
      for (const [name, value] of forward.setHeaders) req.headers.set(name, value);
    }
    identity = outcome.identity;
    responseHeaders = forward
      ? [...(outcome.responseHeaders ?? []), ...forward.responseHeaders]
      : outcome.responseHeaders;
    if (outcome.query !== undefined) upstream = { path: target.path, query: outcome.query };
  }
  let limitHeaders: readonly (readonly [string, string])[] | undefined;
  if (route.rateLimit !== undefined) {
    if (guards?.rateLimit === undefined) {
      limitedLog("error", route.name, "route has a rate limit but no limiter runs", { route: route.name });
      return errorResponse(500, serverHeader);
    }
    const { client, peer, forwardedForBarred } = who();
    const outcome = await guards.rateLimit.check(route.rateLimit, {
      clientIp: client,
      peer,
      forwardedForBarred,
      header: (name) => req.headers.get(name),
      method: req.method,
      path: target.path,
      routeName: route.name,
      ...(identity !== undefined ? { claims: identity.claims } : {}),
    });
    if (!outcome.allowed) {
      outcome.response.headers.set("server", serverHeader);
      return outcome.response;
    }
    limitHeaders = outcome.headers;
  }
  const res = await action(identity, upstream);
  if (responseHeaders !== undefined)
    for (const [name, value] of responseHeaders) res.headers.append(name, value);
  // The gateway's limit is the one the client is subject to here: it replaces any the backend sent.
  if (limitHeaders !== undefined) for (const [name, value] of limitHeaders) res.headers.set(name, value);
  return res;
}
