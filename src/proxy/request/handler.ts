/**
 * The request path of one listener: target and host checks, route lookup, then the route's action.
 * Plain functions over the listener's current table, read once at the start of each request: a table
 * swap never changes a request already in flight. Anything unexpected becomes a 500 and a log line.
 */

import { limitedLog } from "../../observability/log-limit.ts";
import { logger } from "../../observability/logger.ts";
import { traceUpstream } from "../../observability/tracing/trace-context.ts";
import { type CheckedRequest, checkWaf, type InspectedBody } from "../../waf/request-check.ts";
import { awakeBackend, notWokenResponse } from "../activation/hold.ts";
import { balanceInput } from "../balancing/request-input.ts";
import { pacedResponse } from "../bandwidth/paced-stream.ts";
import { heldForward, OVERLOADED, overloadedHeaders } from "../circuit-breaker/held-forward.ts";
import { encodedResponse } from "../compression/encoded-response.ts";
import { originalUri, withErrorPage } from "../error-pages/replace.ts";
import { runResponseFilters } from "../filters/chain.ts";
import type { RequestContext } from "../filters/filter-types.ts";
import { findVirtualHost, normaliseHost } from "../match/host.ts";
import { findRoute } from "../match/routes.ts";
import { forwardedForTrust, type ListenerState, listenerReadsProxyHeader } from "../settings.ts";
import type { CompiledBackend, CompiledForward, CompiledRoute, ListenerTable } from "../table.ts";
import { requestClient } from "./client-address.ts";
import {
  CLIENT_BODY_TIMEOUT,
  CLIENT_GONE,
  limit,
  outlastsIdle,
  prepareClientResponse,
  readsWhole,
} from "./forward.ts";
import { prepareUpstreamHeaders } from "./forwarded-headers.ts";
import { guarded, needsGuards } from "./guards.ts";
import { refusedMethod } from "./methods.ts";
import type { RequestInfo } from "./observer.ts";
import { matchedPrefix } from "./path-modifier.ts";
import { readBodyWithin } from "./read-body.ts";
import { buildLocation } from "./redirect.ts";
import { parseRequestTarget, type RequestTarget } from "./request-target.ts";
import { errorResponse, textResponse } from "./responses.ts";
import { dropUnderscoredFields, reportDropped } from "./underscored-fields.ts";
import { declaredOver } from "./upload-watch.ts";
import { forwardWebSocket } from "./websocket/forward.ts";
import { isWebSocketUpgrade, type ProxyServer } from "./websocket/relay.ts";

const log = logger.child({ component: "proxy" });

export function handleRequest(
  req: Request,
  srv: ProxyServer,
  state: ListenerState,
  info: RequestInfo | undefined,
): Response | Promise<Response> {
  const table = state.table;
  const server = state.settings.serverHeader;
  // First, so that no header match, guard or forwarded field sees them (underscored-fields.ts).
  if (!state.settings.underscoresInHeaders) {
    const dropped = dropUnderscoredFields(req.headers);
    if (dropped !== undefined) reportDropped(state, dropped);
  }
  // Tracing on (observability/tracing/): whether this request is traced, before anything can answer it.
  const sampler = state.settings.observer?.sampler;
  if (sampler !== undefined && info !== undefined)
    info.trace = sampler.start(req.headers, table.scheme, table.port || state.boundPort);
  const target = parseRequestTarget(req.url);
  if (target === undefined) return errorResponse(400, server);
  const rawHost = req.headers.get("host");
  const host = normaliseHost(rawHost);
  const vh = findVirtualHost(table.hosts, host);
  const route =
    vh === undefined ? undefined : findRoute(vh, target.path, req.method, req.headers, target.query);
  if (route === undefined) return errorResponse(404, server);
  if (info !== undefined) {
    info.route = route.name;
    info.logShare = route.logShare;
    info.host = rawHost;
  }
  if (refusedMethod(req.method, route)) return errorResponse(405, server);
  // As nginx, before the guards: a declared length past the route's limit is refused unread.
  const maxBody = route.requestBodyMaxBytes;
  if (maxBody !== undefined && declaredOver(req.headers, maxBody)) return errorResponse(413, server);
  const pages = route.errorPages;
  if (pages === undefined) return serveRoute(req, route, target, rawHost, host, srv, state, table, info);
  // After the 405 and 413 above, which the raw front answers itself too: those are never replaced.
  const served = serveRoute(req, route, target, rawHost, host, srv, state, table, info);
  const timeoutMs = state.settings.defaultUpstreamTimeoutMs;
  return withErrorPage(pages, req, originalUri(req.url), served, server, timeoutMs);
}

/** The route's guards, then its action. */
function serveRoute(
  req: Request,
  route: CompiledRoute,
  target: RequestTarget,
  rawHost: string | null,
  host: string,
  srv: ProxyServer,
  state: ListenerState,
  table: ListenerTable,
  info: RequestInfo | undefined,
): Response | Promise<Response> {
  const server = state.settings.serverHeader;
  if (needsGuards(route)) {
    const who = requestClient(req, srv, forwardedForTrust(state), listenerReadsProxyHeader(state));
    // A request a guard refuses is logged with its client too, as on the raw front.
    if (info !== undefined) info.client = who.client;
    return guarded(
      req,
      route,
      target,
      table,
      state.settings.guards,
      server,
      () => who,
      (_identity, upstream) =>
        route.waf === undefined
          ? runAction(req, route, upstream, rawHost, host, srv, state, table, info)
          : // Last of the guards: what an address list, authentication or a rate limit refuses costs
            // no inspection (guards.ts has the order).
            checkWaf(route.waf, wafRequest(req, upstream, who.client, table, state), server).then(
              (checked) =>
                "answer" in checked
                  ? checked.answer
                  : runAction(req, route, upstream, rawHost, host, srv, state, table, info, checked.body),
            ),
    );
  }
  return runAction(req, route, target, rawHost, host, srv, state, table, info);
}

function wafRequest(
  req: Request,
  target: RequestTarget,
  client: string,
  table: ListenerTable,
  state: ListenerState,
): CheckedRequest {
  const { path, query } = target;
  return {
    req,
    path,
    query,
    client,
    serverAddress: table.address,
    serverPort: table.port || state.boundPort,
  };
}

function runAction(
  req: Request,
  route: CompiledRoute,
  target: RequestTarget,
  rawHost: string | null,
  host: string,
  srv: ProxyServer,
  state: ListenerState,
  table: ListenerTable,
  info: RequestInfo | undefined,
  /** The body the route's WAF already read (waf/request-check.ts); absent: none read. */
  inspected?: InspectedBody,
): Response | Promise<Response> {
  const server = state.settings.serverHeader;
  try {
    const a = route.action;
    switch (a.kind) {
      case "Forward":
        return forwardRoute(req, route, a, target, rawHost, srv, state, table, info, inspected);
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
        if (a.error !== undefined)
          limitedLog("error", route.name, "route cannot be served", { route: route.name, error: a.error });
        const res = textResponse(a.status, a.body, server, a.contentType);
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
  srv: ProxyServer,
  state: ListenerState,
  table: ListenerTable,
  info: RequestInfo | undefined,
  inspected: InspectedBody,
): Promise<Response> {
  const { serverHeader, defaultUpstreamTimeoutMs } = state.settings;
  try {
    const who = requestClient(req, srv, forwardedForTrust(state), listenerReadsProxyHeader(state));
    // A balanced route (balancing/) may pick the choice itself: a session token names its endpoint.
    const https = table.scheme === "https";
    const lease = action.balancer?.lease(
      balanceInput(req.headers, target.path, target.query, who.client, https),
    );
    const choice = action.balancer === undefined ? action.pick() : lease?.choice;
    if (choice === undefined) {
      log.debug("no backend with a positive weight", { route: route.name });
      return errorResponse(500, serverHeader);
    }
    if (choice.failStatus !== undefined) {
      log.debug("invalid backend reference picked", { route: route.name, backend: choice.backendId });
      return errorResponse(choice.failStatus, serverHeader);
    }
    const chain = choice.filters;
    if (chain.error !== undefined) {
      const fields = { route: route.name, backend: choice.backendId, error: chain.error };
      limitedLog("error", route.name, "route cannot be served", fields);
      return errorResponse(500, serverHeader);
    }
    // Upgrades need the client's handshake headers intact for Bun: the upstream gets a copy.
    const upgrade = req.headers.get("upgrade");
    const ws = upgrade !== null && isWebSocketUpgrade(req, upgrade);
    const limits = {
      bytes: state.settings.requestBufferBytes,
      gapMs: state.settings.clientBodyTimeoutSeconds * 1000,
      sendGapMs: limit(state.settings.upstreamSendTimeoutMs),
    };
    // A mirror copies the body forward() would read whole anyway: read first, for the filters to see.
    // A client that fails to send it gets forward()'s answer, response filters included, unmirrored.
    let res: Response | undefined;
    let body: Uint8Array | undefined = inspected instanceof Uint8Array ? inspected : undefined;
    const unread = inspected === undefined;
    if (unread && chain.mirrors && !ws && readsWhole(req, choice.backend?.h2c === true, limits.bytes)) {
      const whole = await readBodyWithin(req, limits.gapMs);
      if (whole === "timeout") res = errorResponse(CLIENT_BODY_TIMEOUT, serverHeader);
      else if (whole === "aborted") res = errorResponse(CLIENT_GONE, serverHeader);
      else body = whole;
    }
    const ctx: RequestContext = {
      req,
      headers: ws ? new Headers(req.headers) : req.headers,
      path: target.path,
      query: target.query,
      host: rawHost,
      prefix: matchedPrefix(route),
      timeoutMs: defaultUpstreamTimeoutMs,
      upstream: "",
      body,
      ...(inspected instanceof ReadableStream ? { bodyStream: inspected } : {}),
      observer: state.settings.observer,
      trace: info?.trace,
    };
    if (info !== undefined) info.client = who.client;
    prepareUpstreamHeaders(ctx.headers, {
      peer: who.peer,
      peerTrusted: who.peerTrusted,
      scheme: table.scheme,
      port: table.port || state.boundPort,
      host: rawHost,
    });
    // A sampled request's upstream sees our span as its parent (before the filters, which may change it).
    if (ctx.trace?.sampled === true) traceUpstream(ctx.trace, ctx.headers, choice.backendId);
    if (res === undefined) {
      for (const f of chain.request) {
        res = f(ctx);
        if (res !== undefined) break;
      }
    }
    // A backend asleep (ScaleToZeroPolicy) holds the request while it wakes (activation/hold.ts).
    const activator = choice.backend?.activation;
    let backend = choice.backend;
    if (res === undefined && activator !== undefined) {
      const woken = await awakeBackend(choice.backend as CompiledBackend, activator, ctx);
      if ("reason" in woken) res = notWokenResponse(woken, serverHeader);
      else backend = woken;
    }
    if (res === undefined) {
      if (backend === undefined || backend.bases.length === 0) {
        // Translation reports the cause once; a line per request would flood the logs under load.
        log.debug("backend unavailable", {
          route: route.name,
          backend: choice.backendId,
          problem: backend?.problem ?? "BackendNotFound",
        });
        res = errorResponse(503, serverHeader);
      } else if (ws) {
        const wsLease = backend === choice.backend ? lease : undefined;
        return await forwardWebSocket(ctx, srv, backend, route, chain, state.settings, wsLease, activator);
      } else {
        const idleS = state.settings.idleTimeoutSeconds;
        const lift = outlastsIdle(route, defaultUpstreamTimeoutMs, idleS * 1000);
        if (lift) srv.timeout(req, 0);
        const sent = info === undefined ? 0 : performance.now();
        activator?.begin();
        // Counted in the backend's circuit breaker and the route's client cap, if any (circuit-breaker/).
        const out = await heldForward(
          who.client,
          ctx,
          backend,
          route,
          defaultUpstreamTimeoutMs,
          limitedLog,
          state.settings.observer,
          limits,
          // A woken copy's endpoints are not the balancer's (it saw none): round robin over them.
          backend === choice.backend ? lease : undefined,
        ).finally(() => activator?.end());
        if (info !== undefined) {
          info.upstream = ctx.upstream;
          info.backend = backend.id;
          // As on the raw front: timed and logged only when the upstream answered.
          if (typeof out !== "number") {
            info.upstreamMs = performance.now() - sent;
            info.upstreamStatus = out.status;
          }
        }
        // Lifting it applies to the connection: restored for its next idle spell (measured in Bun).
        if (lift) srv.timeout(req, idleS);
        const bandwidth = route.responseBandwidth;
        if (typeof out === "number") {
          res = errorResponse(out, serverHeader);
          if (out === OVERLOADED) overloadedHeaders(res.headers);
        } else {
          // Compressed before pacing, so the pace counts the bytes that go out (as nginx's limit_rate).
          const passed = encodedResponse(req, prepareClientResponse(out, serverHeader), backend.compression);
          res = bandwidth === undefined ? passed : pacedResponse(passed, bandwidth);
        }
      }
    }
    runResponseFilters(chain, req, res.headers);
    // After the filters, as the raw front adds it (fast-exchange.ts): the session token the lease issued.
    if (lease?.responseField !== undefined) res.headers.append(...lease.responseField);
    return res;
  } catch (err) {
    return internalError(route, err, serverHeader);
  }
}

function internalError(route: CompiledRoute, err: unknown, serverHeader: string): Response {
  limitedLog("error", route.name, "unexpected error while serving a request", {
    route: route.name,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return errorResponse(500, serverHeader);
}
