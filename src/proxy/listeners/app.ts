/**
 * The Hono app of one listener: a single catch-all handler, so Hono stays a thin shell (error hook,
 * a place for later middleware) and the hot path is `handleRequest`.
 */
import { Hono } from "hono";
import { limitedLog } from "../../observability/log-limit.ts";
import { handleRequest } from "../request/handler.ts";
import { errorResponse } from "../request/responses.ts";
import type { ProxyServer } from "../request/websocket/relay.ts";
import type { ListenerState } from "../settings.ts";

export type ListenerApp = Hono<{ Bindings: ProxyServer }>;

export function createListenerApp(state: ListenerState): ListenerApp {
  const app: ListenerApp = new Hono();
  app.all("*", (c): Response | Promise<Response> => {
    const req = c.req.raw;
    const observer = state.settings.observer;
    if (observer === undefined) return handleRequest(req, c.env, state, undefined);
    const info = observer.begin(req);
    const out = handleRequest(req, c.env, state, info);
    if (out instanceof Response) {
      observer.end(info, req, out);
      return out;
    }
    return out.then((res): Response => {
      observer.end(info, req, res);
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
