/**
 * Edge guards run after routing and before a route's filters and action, in the order the architecture
 * fixes: authentication (one immutable identity), then rate limiting (which may key on that identity's
 * verified claims). Routes without guards never come here, so the plain forwarding path pays nothing for
 * them. A route that asks for a guard the process does not have fails closed (500), never open.
 */
import type { AuthEnforcer } from "../../auth/enforce.ts";
import type { Identity } from "../../auth/identity.ts";
import { limitedLog } from "../../observability/log-limit.ts";
import type { RateLimitEnforcer } from "../../ratelimit/enforce.ts";
import type { CompiledRoute, ListenerTable } from "../table.ts";
import type { RequestTarget } from "./request-target.ts";
import { errorResponse } from "./responses.ts";

/** The guard engines of a process (one of each, shared by every listener). */
export interface EdgeGuards {
  readonly auth?: AuthEnforcer;
  readonly rateLimit?: RateLimitEnforcer;
}

/** True when the route asks for any guard; checked on the hot path, so it reads two fields only. */
export function needsGuards(route: CompiledRoute): boolean {
  return route.auth !== undefined || route.rateLimit !== undefined;
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

export async function guarded(
  req: Request,
  route: CompiledRoute,
  target: RequestTarget,
  table: ListenerTable,
  guards: EdgeGuards | undefined,
  serverHeader: string,
  /** The socket peer address (asked only when a rate limit needs it). */
  peer: () => string,
  action: (identity: Identity | undefined) => Response | Promise<Response>,
): Promise<Response> {
  if (isPreflight(req, route)) return action(undefined);
  let identity: Identity | undefined;
  let responseHeaders: readonly (readonly [string, string])[] | undefined;
  if (route.auth !== undefined) {
    if (guards?.auth === undefined) {
      limitedLog("error", route.name, "route requires authentication but no enforcer runs", {
        route: route.name,
      });
      return errorResponse(500, serverHeader);
    }
    const outcome = await guards.auth.check(route.auth, req, {
      path: target.path,
      query: target.query.length > 0 ? target.query.slice(1) : "",
      host: req.headers.get("host") ?? "",
      scheme: table.scheme,
    });
    if (!outcome.ok) return outcome.response;
    for (const name of outcome.removeHeaders) req.headers.delete(name);
    for (const [name, value] of outcome.setHeaders) req.headers.set(name, value);
    identity = outcome.identity;
    responseHeaders = outcome.responseHeaders;
  }
  let limitHeaders: readonly (readonly [string, string])[] | undefined;
  if (route.rateLimit !== undefined) {
    if (guards?.rateLimit === undefined) {
      limitedLog("error", route.name, "route has a rate limit but no limiter runs", { route: route.name });
      return errorResponse(500, serverHeader);
    }
    const outcome = await guards.rateLimit.check(route.rateLimit, {
      clientIp: peer(),
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
  const res = await action(identity);
  if (responseHeaders !== undefined)
    for (const [name, value] of responseHeaders) res.headers.append(name, value);
  // The gateway's limit is the one the client is subject to here: it replaces any the backend sent.
  if (limitHeaders !== undefined) for (const [name, value] of limitHeaders) res.headers.set(name, value);
  return res;
}
