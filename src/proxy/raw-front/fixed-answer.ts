/**
 * Answers of the gateway's own that the raw front makes itself, as handler.ts makes them: a route whose
 * action is a redirect or a direct response (the same status, Location from redirect.ts, body and media
 * type, then the route's response filters), and a CORS preflight on a fast route (cors.ts answers it, the
 * chain's response filters follow). Left to the relay (undefined here): a redirect or direct response on
 * a route with guards or error pages (the full request path runs those around the action), a 1xx status
 * (no Response can carry one: handler.ts answers 500), and an error status to a gRPC call (app.ts turns
 * it into a gRPC status).
 */
import { limitedLog } from "../../observability/log-limit.ts";
import type { RequestContext, ResponseFilter } from "../filters/filter-types.ts";
import type { HeaderLookup } from "../match/routes.ts";
import { isGrpcContentType } from "../request/grpc/status.ts";
import { needsGuards } from "../request/guards.ts";
import { matchedPrefix } from "../request/path-modifier.ts";
import { buildLocation } from "../request/redirect.ts";
import type { RequestTarget } from "../request/request-target.ts";
import type { BackendChoice, ChoiceLease, CompiledRoute, ListenerTable } from "../table.ts";
import { httpDate, reasonPhrase, serialiseHeaders } from "./http1/head-to-client.ts";
import type { RequestHead } from "./http1/request-head.ts";

/** What the front needs of the request to answer it. */
export interface FixedRequest {
  readonly head: RequestHead;
  readonly target: RequestTarget;
  /** Normalised request host (match/host.ts). */
  readonly host: string;
  readonly headers: HeaderLookup;
  /** The head's fields as Headers, for a response filter that reads the request (CORS). */
  readonly headerList: () => Headers;
  readonly table: ListenerTable;
  /** `table.port`, or the port bound when the model names none. */
  readonly port: number;
  readonly serverHeader: string;
}

/** A complete response and its status; undefined: not answerable here. */
export interface FixedAnswer {
  readonly bytes: Buffer;
  readonly status: number;
}

/** Whether `route` is answered by `fixedAnswer` for some requests (checked before any is built). */
export function answersItself(route: CompiledRoute): boolean {
  const k = route.action.kind;
  return (
    (k === "Redirect" || k === "DirectResponse") && route.errorPages === undefined && !needsGuards(route)
  );
}

/** `close`: the connection ends after this response. Call only when `answersItself(route)`. */
export function fixedAnswer(route: CompiledRoute, r: FixedRequest, close: boolean): FixedAnswer | undefined {
  const a = route.action;
  const h = new Headers();
  let status: number;
  let body: Buffer | undefined;
  if (a.kind === "Redirect") {
    status = a.statusCode;
    const location = buildLocation(a, {
      listenerScheme: r.table.scheme,
      listenerPort: r.port,
      host: r.host,
      path: r.target.path,
      query: r.target.query,
      prefix: matchedPrefix(route),
    });
    h.set("location", location);
    h.set("server", r.serverHeader);
  } else if (a.kind === "DirectResponse") {
    status = a.status;
    if (status < 200 || status > 599) return undefined;
    if (status >= 400 && isGrpcContentType(r.headers.get("content-type"))) return undefined;
    if (a.error !== undefined)
      limitedLog("error", route.name, "route cannot be served", { route: route.name, error: a.error });
    h.set("content-type", a.contentType);
    h.set("server", r.serverHeader);
    body = Buffer.from(a.body, "utf8");
  } else return undefined;
  const cors = route.filters.cors;
  const req = route.filters.response.length === 0 ? NO_REQUEST : requestOf(cors ? r : undefined);
  for (const f of route.filters.response) f(req, h);
  return serialised(status, h, body, r.head, close);
}

/**
 * A CORS preflight a filter of the chain answers (cors.ts), then the chain's response filters and the
 * session token, as handler.ts answers it (never forwarded); undefined for any other request.
 */
export function preflightAnswer(
  choice: BackendChoice,
  r: FixedRequest,
  req: Request,
  lease: ChoiceLease | undefined,
  close: boolean,
): FixedAnswer | undefined {
  if (r.head.method !== "OPTIONS") return undefined;
  const ctx: RequestContext = {
    req,
    headers: new Headers(),
    path: r.target.path,
    query: r.target.query,
    host: r.head.host,
    prefix: "",
    timeoutMs: 0,
    upstream: "",
    body: undefined,
    observer: undefined,
  };
  let res: Response | undefined;
  for (const f of choice.filters.request) {
    res = f(ctx);
    if (res !== undefined) break;
  }
  if (res === undefined) return undefined;
  const h = new Headers(res.headers);
  for (const f of choice.filters.response) f(req, h);
  if (lease?.responseField !== undefined) h.append(...lease.responseField);
  return serialised(res.status, h, undefined, r.head, close);
}

/**
 * `choice` with its response filters handed `req`: the fast path runs them without a request
 * (head-to-client.ts), which only cors.ts reads.
 */
export function withRequest(choice: BackendChoice, req: Request): BackendChoice {
  const response = choice.filters.response.map(
    (f): ResponseFilter =>
      (_none, h) =>
        f(req, h),
  );
  return { ...choice, filters: { ...choice.filters, response } };
}

/** The request as response filters and cors.ts read it: its method (OPTIONS or GET) and fields. */
export function requestOf(r: FixedRequest | undefined): Request {
  if (r === undefined) return NO_REQUEST;
  const method = r.head.method === "OPTIONS" ? "OPTIONS" : "GET";
  return new Request(REQUEST_URL, { method, headers: r.headerList() });
}

/**
 * The response on the wire, framed as Bun.serve frames it: no length on 204 and 304, an empty body on
 * 205, none for HEAD; Date added.
 */
function serialised(
  status: number,
  h: Headers,
  body: Buffer | undefined,
  head: RequestHead,
  close: boolean,
): FixedAnswer {
  const bodiless = status === 204 || status === 304;
  const out = bodiless || status === 205 || head.method === "HEAD" ? undefined : body;
  if (!bodiless) h.set("content-length", String(status === 205 ? 0 : (body?.length ?? 0)));
  if (!h.has("date")) h.set("date", httpDate());
  if (close) h.set("connection", "close");
  else if (head.http10) h.set("connection", "keep-alive");
  const text = `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n${serialiseHeaders(h)}\r\n`;
  if (out === undefined || out.length === 0) return { bytes: Buffer.from(text, "latin1"), status };
  const bytes = Buffer.allocUnsafe(text.length + out.length);
  bytes.write(text, 0, "latin1");
  out.copy(bytes, text.length);
  return { bytes, status };
}

const REQUEST_URL = "http://raw-front.invalid/";
const NO_REQUEST = new Request(REQUEST_URL);
