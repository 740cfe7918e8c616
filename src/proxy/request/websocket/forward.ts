/**
 * The WebSocket branch of a Forward: a routed, filtered `Upgrade: websocket` request whose backend has
 * endpoints. The upstream socket is opened first (time limit: the route's backend or request timeout),
 * then the client is upgraded; see relay.ts for the relay.
 */

import { limitedLog } from "../../../observability/log-limit.ts";
import { OVERLOADED, overloadedHeaders } from "../../circuit-breaker/held-forward.ts";
import { runResponseFilters } from "../../filters/chain.ts";
import type { FilterChain, RequestContext } from "../../filters/filter-types.ts";
import { LOCAL_FAILURE } from "../../health/outlier-detector.ts";
import type { ProxySettings } from "../../settings.ts";
import { type ChoiceLease, type CompiledBackend, type CompiledRoute, nextEndpoint } from "../../table.ts";
import { limit } from "../forward.ts";
import { errorResponse } from "../responses.ts";
import { openUpstream, type ProxyServer, upgradeClient } from "./relay.ts";

export async function forwardWebSocket(
  ctx: RequestContext,
  srv: ProxyServer,
  backend: CompiledBackend,
  route: CompiledRoute,
  chain: FilterChain,
  settings: ProxySettings,
  /** The route's balancing (a session, a hash key); absent: round robin. */
  lease?: ChoiceLease,
  /** An activated backend's in-flight count: the socket counts from the dial until either side closes. */
  activity?: { begin(): void; end(): void },
): Promise<Response> {
  const req = ctx.req;
  const serverHeader = settings.serverHeader;
  // Checked before dialling the upstream: Bun would refuse to upgrade such a request anyway.
  if (req.headers.get("sec-websocket-key") === null || req.headers.get("sec-websocket-version") !== "13")
    return errorResponse(400, serverHeader);
  const t = route.timeouts;
  const ms = limit(t?.backendRequestMs ?? t?.requestMs ?? settings.defaultUpstreamTimeoutMs);
  const base = lease === undefined ? nextEndpoint(backend) : lease.next();
  // Counted against the backend's connection caps while it lasts, as Envoy counts an upgraded
  // connection (and the raw front's pipe holds its pool connection).
  const caps = backend.breaker?.capsConnections === true ? backend.breaker : undefined;
  if (caps !== undefined && !caps.tryConnect(base)) {
    lease?.end(true);
    const res = errorResponse(OVERLOADED, serverHeader);
    overloadedHeaders(res.headers);
    return res;
  }
  activity?.begin();
  const up = await openUpstream(ctx, base, ms, backend.tls);
  lease?.end(!up.ok);
  if (!up.ok) {
    caps?.endConnection(base);
    activity?.end();
    if (up.status !== 499) {
      backend.health?.report(base, LOCAL_FAILURE);
      const msg = up.status === 504 ? "upstream websocket timed out" : "upstream websocket refused";
      limitedLog("warn", route.name, msg, { route: route.name, backend: backend.id, endpoint: base });
    }
    return errorResponse(up.status === 499 ? 502 : up.status, serverHeader);
  }
  const headers = new Headers({ server: serverHeader });
  runResponseFilters(chain, req, headers);
  if (lease?.responseField !== undefined) headers.append(...lease.responseField);
  const end =
    activity === undefined && caps === undefined
      ? undefined
      : () => {
          activity?.end();
          caps?.endConnection(base);
        };
  if (!upgradeClient(req, srv, up.socket, headers, end)) return errorResponse(400, serverHeader);
  // Bun ignores what the handler returns once the request is upgraded (measured); Hono wants a Response.
  return new Response(null, { status: 200 });
}
