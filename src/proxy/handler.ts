/**
 * The request path of one listener: target and host checks, route lookup, then the route's action.
 * Plain functions over the listener's current table, read once at the start of each request: a table
 * swap never changes a request already in flight. Anything unexpected becomes a 500 and a log line.
 */
import { logger } from "../observability/logger.ts";
import type { RequestContext } from "./filters/chain.ts";
import { runResponseFilters } from "./filters/chain.ts";
import { forward, prepareClientResponse } from "./forward.ts";
import { prepareUpstreamHeaders } from "./forwarded-headers.ts";
import { findVirtualHost, normaliseHost } from "./match/host.ts";
import { findRoute } from "./match/routes.ts";
import { buildLocation } from "./redirect.ts";
import { parseRequestTarget, type RequestTarget } from "./request-target.ts";
import { errorResponse, textResponse } from "./responses.ts";
import { type CompiledForward, type CompiledRoute, type ListenerTable, PATH_REGEX } from "./table.ts";

const log = logger.child({ component: "proxy" });

/** Settings shared by every listener of a server. */
export interface ProxySettings {
  readonly defaultUpstreamTimeoutMs: number;
  readonly serverHeader: string;
}

/** A listener's live state: `table` is replaced by one assignment on reload. */
export interface ListenerState {
  table: ListenerTable;
  /** The port actually bound (differs from the model only when the model says 0). */
  boundPort: number;
  readonly settings: ProxySettings;
}

/** Where the client is; Bun's `server.requestIP`. */
export type ClientAddress = (req: Request) => string;

export function handleRequest(
  req: Request,
  clientAddress: ClientAddress,
  state: ListenerState,
): Response | Promise<Response> {
  const table = state.table;
  const server = state.settings.serverHeader;
  const target = parseRequestTarget(req.url);
  if (target === undefined) return errorResponse(400, server);
  const rawHost = req.headers.get("host");
  const host = normaliseHost(rawHost);
  const vh = findVirtualHost(table.hosts, host);
  const route =
    vh === undefined ? undefined : findRoute(vh, target.path, req.method, req.headers, target.query);
  if (route === undefined) return errorResponse(404, server);
  try {
    const a = route.action;
    switch (a.kind) {
      case "Forward":
        return forwardRoute(req, route, a, target, rawHost, clientAddress, state, table);
      case "Redirect": {
        const location = buildLocation(a, {
          listenerScheme: table.scheme,
          listenerPort: table.port || state.boundPort,
          host,
          path: target.path,
          query: target.query,
          prefix: matchedPrefix(route),
        });
        const res = new Response(null, { status: a.statusCode, headers: { location, server } });
        runResponseFilters(route.filters, req, res.headers);
        return res;
      }
      default: {
        if (a.error !== undefined) log.error("route cannot be served", { route: route.name, error: a.error });
        const res = textResponse(a.status, a.body, server);
        runResponseFilters(route.filters, req, res.headers);
        return res;
      }
    }
  } catch (err) {
    return internalError(route, err, server);
  }
}

async function forwardRoute(
  req: Request,
  route: CompiledRoute,
  action: CompiledForward,
  target: RequestTarget,
  rawHost: string | null,
  clientAddress: ClientAddress,
  state: ListenerState,
  table: ListenerTable,
): Promise<Response> {
  const { serverHeader, defaultUpstreamTimeoutMs } = state.settings;
  try {
    const choice = action.pick();
    if (choice === undefined) {
      log.warn("no backend with a positive weight", { route: route.name });
      return errorResponse(500, serverHeader);
    }
    const chain = choice.filters;
    if (chain.error !== undefined) {
      log.error("route cannot be served", {
        route: route.name,
        backend: choice.backendId,
        error: chain.error,
      });
      return errorResponse(500, serverHeader);
    }
    const ctx: RequestContext = {
      req,
      headers: req.headers,
      path: target.path,
      query: target.query,
      host: rawHost,
      prefix: matchedPrefix(route),
      timeoutMs: defaultUpstreamTimeoutMs,
    };
    prepareUpstreamHeaders(req.headers, {
      clientIp: clientAddress(req),
      scheme: table.scheme,
      port: table.port || state.boundPort,
      host: rawHost,
    });
    let res: Response | undefined;
    for (const f of chain.request) {
      res = f(ctx);
      if (res !== undefined) break;
    }
    if (res === undefined) {
      const backend = choice.backend;
      if (backend === undefined || backend.bases.length === 0) {
        log.warn("backend unavailable", {
          route: route.name,
          backend: choice.backendId,
          problem: backend?.problem ?? "BackendNotFound",
        });
        res = errorResponse(503, serverHeader);
      } else {
        const out = await forward(ctx, backend, route, defaultUpstreamTimeoutMs, log);
        res =
          typeof out === "number"
            ? errorResponse(out, serverHeader)
            : prepareClientResponse(out, serverHeader);
      }
    }
    runResponseFilters(chain, req, res.headers);
    return res;
  } catch (err) {
    return internalError(route, err, serverHeader);
  }
}

/** The prefix a ReplacePrefixMatch replaces: the route's normalised prefix (or exact path). */
function matchedPrefix(route: CompiledRoute): string {
  return route.pathType === PATH_REGEX ? "" : route.pathValue;
}

function internalError(route: CompiledRoute, err: unknown, serverHeader: string): Response {
  log.error("unexpected error while serving a request", {
    route: route.name,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return errorResponse(500, serverHeader);
}
