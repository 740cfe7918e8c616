/**
 * Routes one parsed request and picks who serves it: the fast path (routes `isFastRoute` accepts; of the
 * upgrades, WebSocket handshakes only), or the slow path (everything else, relayed to the listener's internal Bun.serve app, which
 * runs `handleRequest`, so every feature works behind this front). A 404 and refused targets are
 * answered here directly, with the bodies handler.ts uses, and so are redirects, direct responses and
 * CORS preflights (fixed-answer.ts).
 */

import { balanceInput } from "../balancing/request-input.ts";
import { findVirtualHost, normaliseHost } from "../match/host.ts";
import { findRoute, type HeaderLookup } from "../match/routes.ts";
import { needsGuards } from "../request/guards.ts";
import { refusedMethod } from "../request/methods.ts";
import { type RequestInfo, startedInfo } from "../request/observer.ts";
import type { RequestTarget } from "../request/request-target.ts";
import { reportDropped } from "../request/underscored-fields.ts";
import type { BackendChoice, ChoiceLease, CompiledRoute } from "../table.ts";
import type { ClientSide, Exchange } from "./client-side.ts";
import { runGuards } from "./edge-guards.ts";
import { FastExchange } from "./fast-exchange.ts";
import {
  answersItself,
  type FixedAnswer,
  type FixedRequest,
  fixedAnswer,
  preflightAnswer,
  requestOf,
  withRequest,
} from "./fixed-answer.ts";
import { GuardedExchange, startFast } from "./guarded-exchange.ts";
import { generatedAnswer } from "./http1/head-to-client.ts";
import { BODY_LENGTH, type RequestHead } from "./http1/request-head.ts";
import { routingTarget } from "./http1/target-path.ts";
import { isFastRoute } from "./plan.ts";
import { RelayedExchange } from "./relayed-exchange.ts";
import { isPipedUpgrade } from "./websocket-pipe.ts";

/**
 * Header conditions and guards read the parsed head through this (values of repeated fields joined as
 * Headers does); names are compared as bytes and only the matching values are decoded.
 */
class HeadLookup implements HeaderLookup {
  constructor(private readonly head: RequestHead) {}
  get(name: string): string | null {
    const lower = name.toLowerCase();
    const head = this.head;
    let v: string | null = null;
    for (let i = 0; i < head.fieldCount; i++) {
      if (head.nameIs(i, lower)) v = v === null ? head.value(i) : `${v}, ${head.value(i)}`;
    }
    return v;
  }
}

/** The head's fields as Headers (repeated fields appended in order). */
function headersOf(head: RequestHead): Headers {
  const out = new Headers();
  for (let i = 0; i < head.fieldCount; i++) out.append(head.rawName(i), head.value(i));
  return out;
}

export function dispatch(conn: ClientSide, head: RequestHead): Exchange | undefined {
  const state = conn.state0;
  const observer = state.settings.observer;
  const info: RequestInfo | undefined = observer === undefined ? undefined : startedInfo();
  // The parser left them out already (request-head.ts); here the operator is told.
  if (head.dropped.length > 0) reportDropped(state, head.dropped);
  const target = routingTarget(head.target);
  if (target === undefined) {
    answer(conn, head, info, 400, "", true);
    return undefined;
  }
  const host = normaliseHost(head.host);
  const vh = findVirtualHost(state.table.hosts, host);
  const lookup = new HeadLookup(head);
  const route = vh === undefined ? undefined : findRoute(vh, target.path, head.method, lookup, target.query);
  if (route === undefined) {
    answer(conn, head, info, 404, target.path, false);
    return undefined;
  }
  if (info !== undefined) {
    info.route = route.name;
    info.logShare = route.logShare;
  }
  if (refusedMethod(head.method, route)) {
    answer(conn, head, info, 405, target.path, false);
    return undefined;
  }
  // As nginx, before the guards: a declared length past the route's limit is refused, the body unread
  // (the connection closes); a chunked body is counted as it streams (fast-exchange.ts, handler.ts).
  const maxBody = route.requestBodyMaxBytes;
  if (maxBody !== undefined && head.bodyKind === BODY_LENGTH && head.contentLength > maxBody) {
    answer(conn, head, info, 413, target.path, true);
    return undefined;
  }
  if (answersItself(route)) {
    const fixed = fixedAnswer(route, fixedRequest(conn, head, target, host, lookup), !head.keepAlive);
    if (fixed !== undefined) {
      sendAnswer(conn, head, info, fixed, target.path, lookup);
      return undefined;
    }
  }
  // A WebSocket handshake is piped from here (websocket-pipe.ts); other upgrades go to the app.
  const piped = head.upgrade === null || isPipedUpgrade(head);
  if (
    piped &&
    route.action.kind === "Forward" &&
    isFastRoute(route) &&
    !loginFlow(conn, route, target, host, lookup)
  ) {
    const a = route.action;
    // Only balanced routes (balancing/) build an input and a lease; round robin stays as it was.
    const lease =
      a.balancer === undefined
        ? undefined
        : a.balancer.lease(balanceInput(lookup, target.path, target.query, conn.clientIp, https(state)));
    const picked = a.balancer === undefined ? a.pick() : lease?.choice;
    // A CORS filter answers its preflights here, and its response fields read the request's Origin.
    const choice =
      picked === undefined || !picked.filters.cors
        ? picked
        : corsChoice(conn, head, target, host, lookup, info, picked, lease);
    if (choice === null) return undefined;
    if (choice !== undefined) {
      if (info !== undefined && observer?.sampler !== undefined) startTrace(state, info, lookup);
      if (!needsGuards(route)) return new FastExchange(conn, head, target, route, choice, info, lease);
      const result = runGuards({
        route,
        target,
        method: head.method,
        host,
        headers: lookup,
        headerList: () => headersOf(head),
        scheme: state.table.scheme,
        port: state.table.port,
        clientIp: conn.clientIp,
        peer: conn.origin.peer,
        forwardedForBarred: conn.origin.viaProxyHeader,
        tls: conn.tls,
        guards: state.settings.guards,
        serverHeader: state.settings.serverHeader,
      });
      // Admitted at once (a cached token, no limit) and no WAF to wait for: no deferral at all.
      if (!(result instanceof Promise) && result.ok && route.waf === undefined)
        return startFast(conn, head, target, route, choice, info, result, lease);
      return new GuardedExchange(conn, head, target, route, choice, info, result, lease);
    }
  }
  const relayTls = route.clientCertificate !== undefined;
  return new RelayedExchange(conn, head, conn.internalEndpoint, route.timeouts, relayTls);
}

/**
 * OIDC's login flow (redirect, callback, logout, a session cookie this process has not verified) needs the
 * Request: relayed to the app. Requests with a verified session or a bearer token stay here.
 */
function loginFlow(
  conn: ClientSide,
  route: CompiledRoute,
  target: RequestTarget,
  host: string,
  lookup: HeadLookup,
): boolean {
  const auth = route.auth;
  if (auth?.oidc === undefined) return false;
  const state = conn.state0;
  const url = { path: target.path, query: target.query, host, scheme: state.table.scheme };
  return state.settings.guards?.auth?.needsRequest(auth, lookup, url) ?? false;
}

function fixedRequest(
  conn: ClientSide,
  head: RequestHead,
  target: RequestTarget,
  host: string,
  lookup: HeadLookup,
): FixedRequest {
  const state = conn.state0;
  return {
    head,
    target,
    host,
    headers: lookup,
    headerList: () => headersOf(head),
    table: state.table,
    port: state.table.port || state.boundPort,
    serverHeader: state.settings.serverHeader,
  };
}

/** The preflight answered (null), or `choice` with its response filters given the request. */
function corsChoice(
  conn: ClientSide,
  head: RequestHead,
  target: RequestTarget,
  host: string,
  lookup: HeadLookup,
  info: RequestInfo | undefined,
  choice: BackendChoice,
  lease: ChoiceLease | undefined,
): BackendChoice | null {
  const r = fixedRequest(conn, head, target, host, lookup);
  const req = requestOf(r);
  const preflight = preflightAnswer(choice, r, req, lease, !head.keepAlive);
  if (preflight === undefined) return withRequest(choice, req);
  sendAnswer(conn, head, info, preflight, target.path, lookup);
  return null;
}

/** Writes an answer fixed-answer.ts made, observed as handler.ts answers are. */
function sendAnswer(
  conn: ClientSide,
  head: RequestHead,
  info: RequestInfo | undefined,
  fixed: FixedAnswer,
  path: string,
  lookup: HeadLookup,
): void {
  conn.write(fixed.bytes);
  observeAnswer(conn, head, info, fixed.status, path, lookup.get("x-request-id") ?? "");
  conn.responseDone(!head.keepAlive);
}

/** Tracing on: whether a request the raw front serves itself is traced (relayed ones: handler.ts). */
function startTrace(state: ClientSide["state0"], info: RequestInfo, headers: HeadLookup): void {
  const sampler = state.settings.observer?.sampler;
  info.trace = sampler?.start(headers, state.table.scheme, state.table.port || state.boundPort);
}

function https(state: ClientSide["state0"]): boolean {
  return state.table.scheme === "https";
}

function answer(
  conn: ClientSide,
  head: RequestHead,
  info: RequestInfo | undefined,
  status: number,
  path: string,
  close: boolean,
): void {
  const serverHeader = conn.state0.settings.serverHeader;
  const res = generatedAnswer(head.method, status, serverHeader, close || !head.keepAlive);
  conn.write(res);
  observeAnswer(conn, head, info, status, path, "");
  conn.responseDone(close);
}

/** An answer the front made itself, to metrics, the access log and tracing (as app.ts the relayed ones). */
function observeAnswer(
  conn: ClientSide,
  head: RequestHead,
  info: RequestInfo | undefined,
  status: number,
  path: string,
  requestId: string,
): void {
  if (info === undefined) return;
  info.client = conn.clientIp;
  if (conn.state0.settings.observer?.sampler !== undefined)
    startTrace(conn.state0, info, new HeadLookup(head));
  conn.state0.settings.observer?.endRaw?.(info, {
    method: head.method,
    host: head.host ?? "",
    path,
    requestId,
    status,
    bytes: -1,
    head,
  });
}
