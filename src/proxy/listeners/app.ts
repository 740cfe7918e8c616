/**
 * The Hono app of one listener: a single catch-all handler, so Hono stays a thin shell (error hook,
 * a place for later middleware) and the hot path is `handleRequest`. An error the gateway answers to a
 * gRPC call leaves as a gRPC status (request/grpc/status.ts).
 */
import { Hono } from "hono";
import { limitedLog } from "../../observability/log-limit.ts";
import { requestClient } from "../request/client-address.ts";
import { asGrpcAnswer } from "../request/grpc/status.ts";
import { handleRequest } from "../request/handler.ts";
import type { RequestInfo } from "../request/observer.ts";
import { errorResponse } from "../request/responses.ts";
import type { ProxyServer } from "../request/websocket/relay.ts";
import { forwardedForTrust, type ListenerState, listenerReadsProxyHeader } from "../settings.ts";

export type ListenerApp = Hono<{ Bindings: ProxyServer }>;

export function createListenerApp(state: ListenerState): ListenerApp {
  const app: ListenerApp = new Hono();
  app.all("*", (c): Response | Promise<Response> => {
    const req = c.req.raw;
    const observer = state.settings.observer;
    if (observer === undefined) {
      const out = handleRequest(req, c.env, state, undefined);
      return out instanceof Response ? asGrpcAnswer(req, out) : out.then((res) => asGrpcAnswer(req, res));
    }
    const info = observer.begin(req);
    const out = handleRequest(req, c.env, state, info);
    if (out instanceof Response) {
      const res = asGrpcAnswer(req, out);
      observer.end(withClient(info, req, c.env, state), req, res);
      return res;
    }
    return out.then((answer): Response => {
      const res = asGrpcAnswer(req, answer);
      observer.end(withClient(info, req, c.env, state), req, res);
      return res;
    });
  });
  app.onError((err) => {
    const fields = { listener: state.table.name, error: err.stack ?? err.message };
    limitedLog("error", state.table.name, "unexpected error while serving a request", fields);
    return errorResponse(500, state.settings.serverHeader);
  });
  return app;
}

/**
 * `info` with its client: the request path looks it up only where it needs it (guards, forwarding), so
 * an answer given before (400, 404, a redirect) is logged with it here, as the raw front logs its own.
 */
function withClient(info: RequestInfo, req: Request, srv: ProxyServer, state: ListenerState): RequestInfo {
  if (info.client === "")
    info.client = requestClient(req, srv, forwardedForTrust(state), listenerReadsProxyHeader(state)).client;
  return info;
}
