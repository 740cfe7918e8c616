/**
 * What the request path tells observability about each request. The proxy fills a `RequestInfo` as it
 * goes (route, upstream) and calls `end` once the response headers are ready; it never formats logs or
 * metrics itself.
 */

import type { RequestTrace, TraceSampler } from "../../observability/tracing/trace-context.ts";

/** Facts about one request, filled in as it is served. */
export interface RequestInfo {
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** Configured route name; "" while none matched. */
  route: string;
  /** `http://ip:port` of the endpoint used, "" when not forwarded. */
  upstream: string;
  /** Milliseconds from sending upstream to its response headers; -1 when not forwarded. */
  upstreamMs: number;
  /** Client address, once looked up. */
  client: string;
  /** The share of the matched route's requests access-logged (set with `route`; CompiledRoute `logShare`):
   * 0 keeps them out, undefined leaves it to `--access-log-sample`. Metrics count them either way. */
  logShare?: number | undefined;
  /** The Host the client sent, kept by the full request path once a route matched (a URLRewrite or
   * upstream-vhost changes the request's own Host header for fetch). */
  host?: string | null;
  /** The request's trace when tracing is on and it has one (observability/tracing/trace-context.ts). */
  trace?: RequestTrace | undefined;
  /** The model's backend id of the endpoint used (set with `upstream`); "" when not forwarded. */
  backend?: string;
  /** The status the upstream answered with (the last attempt's); 0 when none answered. */
  upstreamStatus?: number;
  /**
   * The request as it arrived, taken by the observer before the request path edits its headers, when the
   * access-log format reads request fields and the line is to be written (request-observer.ts).
   */
  arrived?: ArrivedRequest | undefined;
}

/** What an access-log format may read of a request as the client sent it. */
export interface ArrivedRequest {
  /** The request-target as sent, query included (origin-form). */
  readonly target: string;
  /** `HTTP/1.0`, `HTTP/1.1` or `HTTP/2.0`. */
  readonly protocol: string;
  /** Request line, header fields and the declared body length, in bytes (docs/observability.md). */
  readonly length: number;
  /** A field as sent, repeated ones joined with ", "; null when absent. `lower`: a lower-case name. */
  header(lower: string): string | null;
}

export interface RequestObserver {
  /**
   * With tracing on (`--otlp-endpoint`), what both fronts ask when a request they serve arrives (the raw
   * front for requests it answers itself, handler.ts for the rest); absent: tracing off, nothing asked.
   */
  readonly sampler?: TraceSampler | undefined;
  /** Start observing a request; returns the object the proxy fills in. */
  begin(req: Request): RequestInfo;
  /** The response (headers) is ready. Must not throw. */
  end(info: RequestInfo, req: Request, res: Response): void;
  /**
   * The raw-socket front's fast path has no Request/Response objects: it starts `info` itself (see
   * `startedInfo`) and reports the response head here. Optional; must not throw.
   */
  endRaw?(info: RequestInfo, ex: RawExchange): void;
  /**
   * One forwarding attempt failed (a retried request reports each attempt): `backend` is the model's
   * backend id (`namespace/service:port`, from configuration, never from the client), `kind` how it
   * failed. Called only on failure, so a successful request pays nothing. Optional; must not throw.
   */
  upstreamFailed?(backend: string, kind: UpstreamFailure): void;
  /**
   * A TLS handshake on an HTTPS listener failed (`reason` from raw-front/tls/tls-listener.ts
   * `handshakeFailure`: a fixed set, never client text). Optional; must not throw.
   */
  tlsHandshakeFailed?(listener: string, reason: string): void;
  /** A client connection was refused by a cap (`total` or `per_peer`, raw-front/admission.ts). Optional. */
  connectionRefused?(reason: string): void;
  /**
   * `count` request header fields with `_` in their name were dropped from one request on `listener`
   * (underscored-fields.ts). Called only when some were, so other requests pay nothing. Optional.
   */
  headerFieldsDropped?(listener: string, count: number): void;
  /**
   * What became of one request's mirrored copy (filters/request-mirror.ts): `mirror` is the model's
   * backend id or the target's `scheme://host:port` (configuration, never client text). Optional.
   */
  mirrored?(mirror: string, outcome: MirrorOutcome): void;
}

/**
 * `answered`: the mirror answered (any status; the answer is dropped); `failed`: no answer (refused,
 * reset, timed out); `skipped_streamed_body`: not sent, the body was streamed, not read whole;
 * `skipped_busy`: not sent, too many copies (or body bytes) of all mirrors were already waiting for answers.
 */
export type MirrorOutcome = "answered" | "failed" | "skipped_streamed_body" | "skipped_busy";

/** `connect`: refused, reset or an unreadable answer before response headers (502); `timeout`: no
 * response headers within the attempt's time limit (504); `tls`: the TLS handshake with a TLS backend
 * failed, its certificate refused (502). */
export type UpstreamFailure = "connect" | "timeout" | "tls";

/** What an observer may read of the raw front's parsed head (raw-front/http1/request-head.ts). */
export interface RawRequestHead {
  readonly method: string;
  readonly target: string;
  readonly http10: boolean;
  readonly fieldCount: number;
  /** Body length for a Content-Length body, else 0. */
  readonly contentLength: number;
  rawName(i: number): string;
  value(i: number): string;
  nameIs(i: number, lower: string): boolean;
}

/** What the raw-socket front's fast path tells an observer about a request it served. */
export interface RawExchange {
  readonly method: string;
  /** The Host header as sent ("" when none). */
  readonly host: string;
  /** Path without the query. */
  readonly path: string;
  readonly requestId: string;
  readonly status: number;
  /** Content-Length of the response, -1 when not known. */
  readonly bytes: number;
  /** The request's head, read only when an access-log line that names request fields is written. */
  readonly head?: RawRequestHead;
}

/** The protocol of requests the Bun.serve app gets from node:http2 or the raw front's relay. */
const protocols = new WeakMap<Request, string>();

/** `req` arrived over `protocol` (`HTTP/2.0`, `HTTP/1.0`): set where the request is made or relayed. */
export function markProtocol(req: Request, protocol: string): void {
  protocols.set(req, protocol);
}

/**
 * The protocol `req` arrived over: as marked, else `HTTP/1.1`. Bun.serve tells no version: an HTTP/1.0
 * client of the Bun front (answered as HTTP/1.1) and h2c with prior knowledge on its plain-HTTP
 * listeners read as HTTP/1.1 (docs/observability.md).
 */
export function requestProtocol(req: Request): string {
  return protocols.get(req) ?? "HTTP/1.1";
}

/** A fresh RequestInfo for a request that arrived now. */
export function startedInfo(): RequestInfo {
  return {
    started: performance.now(),
    route: "",
    upstream: "",
    upstreamMs: -1,
    client: "",
    logShare: undefined,
    host: undefined,
    trace: undefined,
    backend: "",
    upstreamStatus: 0,
    arrived: undefined,
  };
}
