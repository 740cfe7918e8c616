/**
 * The Hono app of one listener: a single catch-all handler, so Hono stays a thin shell (error hook,
 * a place for later middleware) and the hot path is `handleRequest`.
 */
import type { Server } from "bun";
import { Hono } from "hono";
import { logger } from "../observability/logger.ts";
import { handleRequest, type ListenerState } from "./handler.ts";
import { errorResponse } from "./responses.ts";

const log = logger.child({ component: "proxy" });

export type ListenerApp = Hono<{ Bindings: Server<undefined> }>;

export function createListenerApp(state: ListenerState): ListenerApp {
  const app: ListenerApp = new Hono();
  app.all("*", (c) => {
    const server = c.env;
    return handleRequest(c.req.raw, (req) => server.requestIP(req)?.address ?? "", state);
  });
  app.onError((err) => {
    log.error("unexpected error while serving a request", { error: err.stack ?? err.message });
    return errorResponse(500, state.settings.serverHeader);
  });
  return app;
}
