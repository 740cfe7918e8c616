/**
 * Sends a prepared request to one endpoint of a backend with Bun's fetch (keep-alive pooling is its
 * default), or over an h2c session for `h2c` backends, and hands back the upstream response for
 * streaming: response bodies are passed as streams; a request body with a Content-Length up to
 * `bufferBytes` is read whole first (nginx's `proxy_request_buffering`: a slow sender holds no upstream
 * connection), a larger or chunked one is streamed. Timeouts cover connect
 * to response headers only — the timer is cleared once headers arrive, so a long download is not cut;
 * a streamed body is abandoned when the upstream stops taking it for `sendGapMs` (upload-watch.ts), and an
 * endpoint that cannot be connected to within `connectMs` is found as connect-watch.ts says.
 * `backendRequestMs` bounds each attempt (the route's `requestMs`, then the gateway default, when
 * unset); `requestMs` bounds all attempts and backoffs together; 0 disables either; a gRPC call's
 * `grpc-timeout` (to an h2c backend) bounds them all as well. Failures map to 502
 * (connect/reset) and 504 (timeout), each failed attempt reported to the observer; a client that
 * disconnects first cancels the upstream request (not an upstream error).
 * Retries (the route's codes, connect errors, timeouts only when 504 is listed) happen only for requests
 * without a body, since a streamed body cannot be replayed.
 * A backend whose circuit breaker counts connections gets a connection of its own per attempt (no
 * keep-alive: Bun's pool is not ours to count), held in the breaker until the response ends; one over a
 * connection cap is answered OVER_CAP (503) at once.
 */

import { MAX_RESPONSE_HEAD_BYTES } from "../../model/http-syntax.ts";
import type { LimitedLog } from "../../observability/log-limit.ts";
import { isTLSFailure, tlsOrigin } from "../backend-tls/options.ts";
import { endingStream } from "../circuit-breaker/ending-stream.ts";
import type { RequestContext } from "../filters/filter-types.ts";
import { LOCAL_FAILURE } from "../health/outlier-detector.ts";
import { type ChoiceLease, type CompiledBackend, type CompiledRoute, nextEndpoint } from "../table.ts";
import { watchConnect } from "./connect-watch.ts";
import { grpcTimeoutMs } from "./grpc/timeout.ts";
import { stripHopByHop } from "./hop-by-hop.ts";
import type { RequestObserver } from "./observer.ts";
import { readBodyWithin } from "./read-body.ts";
import { cappedUpload, watchedUpload } from "./upload-watch.ts";
import { h2cFetch } from "./upstream-h2c.ts";

/** How a request body is sent: read whole up to `bytes`, client silence limit, upstream send limit. */
export interface BodyLimits {
  readonly bytes: number;
  /** Longest client silence while the body is read whole, ms. */
  readonly gapMs: number;
  /** Longest time the upstream may take no chunk of a streamed body, ms (Infinity: none). */
  readonly sendGapMs: number;
}

/** What a failed forward ended as; the handler turns it into a response. */
export const UPSTREAM_UNREACHABLE = 502;
export const UPSTREAM_TIMEOUT = 504;
/** The client disconnected before the upstream answered; nobody is left to answer. */
export const CLIENT_GONE = 499;
/** The client went silent while its body was being read whole (nginx answers 408 too). */
export const CLIENT_BODY_TIMEOUT = 408;
/** The body grew past the route's limit (model `requestBodyMaxBytes`) before the upstream answered. */
export const BODY_TOO_LARGE = 413;
/** A connection cap of the backend's circuit breaker refused the attempt's connection. */
export const OVER_CAP = 503;

export async function forward(
  ctx: RequestContext,
  backend: CompiledBackend,
  route: CompiledRoute,
  defaultTimeoutMs: number,
  log: LimitedLog,
  /** Told of each failed attempt (`upstreamFailed`), for the upstream error metric. */
  observer?: RequestObserver,
  buffering: BodyLimits = { bytes: 0, gapMs: 60_000, sendGapMs: Number.POSITIVE_INFINITY },
  /** The route's balancing picks each attempt's endpoint and hears how it ended; absent: round robin. */
  lease?: ChoiceLease,
): Promise<Response | 408 | 413 | 499 | 502 | 503 | 504> {
  const req = ctx.req;
  if (ctx.host !== null) ctx.headers.set("host", ctx.host);
  if (!singleContentLength(ctx.headers)) return UPSTREAM_UNREACHABLE;
  // Read already when a mirror or the route's WAF needed it (handler.ts, waf/request-check.ts).
  let body: Uint8Array | ReadableStream<Uint8Array> | null = ctx.body ?? ctx.bodyStream ?? req.body;
  if (
    ctx.body === undefined &&
    ctx.bodyStream === undefined &&
    readsWhole(req, backend.h2c, buffering.bytes)
  ) {
    const whole = await readBodyWithin(req, buffering.gapMs);
    if (whole === "timeout") return CLIENT_BODY_TIMEOUT;
    if (whole === "aborted") return CLIENT_GONE;
    body = whole;
  }
  const maxBody = route.requestBodyMaxBytes;
  // A body the WAF read whole had no length to check first (handler.ts checks a declared one).
  if (maxBody !== undefined && body instanceof Uint8Array && body.length > maxBody) return BODY_TOO_LARGE;
  const t = route.timeouts;
  const attemptMs = limit(t?.backendRequestMs ?? t?.requestMs ?? defaultTimeoutMs);
  const sendGapMs = t?.sendGapMs !== undefined ? limit(t.sendGapMs) : buffering.sendGapMs;
  const connectMs = t?.connectMs !== undefined ? limit(t.connectMs) : Number.POSITIVE_INFINITY;
  const started = performance.now();
  // A gRPC call's own time (grpc/timeout.ts) bounds every attempt too, as the route's request timeout does.
  const grpcMs = backend.h2c ? grpcTimeoutMs(ctx.headers.get("grpc-timeout")) : undefined;
  const deadline = Math.min(
    t?.requestMs ? started + t.requestMs : Number.POSITIVE_INFINITY,
    grpcMs !== undefined ? started + grpcMs : Number.POSITIVE_INFINITY,
  );
  const retry = route.retry;
  const attempts = retry !== undefined && body === null ? 1 + Math.max(0, retry.attempts) : 1;
  // A retry goes elsewhere than the endpoint the last attempt went to, when there is another.
  let last: string | undefined;
  // A retry the backend's circuit breaker counts (maxParallelRetries), until its attempt has an outcome.
  let heldRetry = false;
  const retryDone = () => {
    if (heldRetry) backend.breaker?.endRetry();
    heldRetry = false;
  };
  const caps = backend.breaker?.capsConnections === true ? backend.breaker : undefined;
  const mayRetry = (): boolean => {
    if (backend.breaker === undefined) return true;
    heldRetry = backend.breaker.tryRetry();
    return heldRetry;
  };
  for (let attempt = 1; ; attempt++) {
    const ms = Math.min(attemptMs, deadline - performance.now());
    if (ms <= 0) {
      retryDone();
      return UPSTREAM_TIMEOUT;
    }
    const base = lease === undefined ? nextEndpoint(backend, last) : lease.next();
    last = base;
    ctx.upstream = base;
    if (caps !== undefined && !caps.tryConnect(base)) {
      retryDone();
      lease?.end(true);
      return OVER_CAP;
    }
    if (ctx.trace !== undefined) ctx.trace.attempts = attempt;
    const ctrl = new AbortController();
    let timedOut = false;
    let sendStalled = false;
    let unreachable = false;
    // A streamed body past the route's limit aborts the request: 413 unless the response has started.
    let overLimit = false;
    const sized =
      body instanceof ReadableStream && maxBody !== undefined
        ? cappedUpload(body, maxBody, () => {
            overLimit = true;
            ctrl.abort();
          })
        : body;
    // A streamed body is watched for an upstream that stops taking it (forward() runs one attempt then).
    const upload =
      sized instanceof ReadableStream && sendGapMs !== Number.POSITIVE_INFINITY
        ? watchedUpload(sized, sendGapMs, () => {
            sendStalled = timedOut = true;
            ctrl.abort();
          })
        : sized;
    const timer =
      ms === Number.POSITIVE_INFINITY
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            ctrl.abort();
          }, ms);
    // nginx's proxy_connect_timeout, as near as fetch allows (connect-watch.ts).
    const stopWatch =
      connectMs < ms
        ? watchConnect(base, connectMs, () => {
            unreachable = timedOut = true;
            ctrl.abort();
          })
        : undefined;
    // A client that goes away cancels the upstream request too (long polls would pile up otherwise).
    const onClientGone = () => ctrl.abort();
    req.signal.addEventListener("abort", onClientGone);
    let res: Response;
    try {
      const tls = backend.tls;
      res = backend.h2c
        ? await h2cFetch(base, ctx.path + ctx.query, {
            method: req.method,
            headers: ctx.headers,
            // Bytes only when a mirror or the route's WAF read the body whole: sent as a stream.
            body:
              upload instanceof ReadableStream
                ? upload
                : upload instanceof Uint8Array
                  ? new Response(upload).body
                  : req.body,
            signal: ctrl.signal,
            request: req,
            ...(tls !== undefined ? { tls } : {}),
          })
        : await fetch((tls === undefined ? base : tlsOrigin(base)) + ctx.path + ctx.query, {
            method: req.method,
            headers: ctx.headers,
            body: upload,
            redirect: "manual",
            decompress: false,
            // Never through an HTTP(S)_PROXY from the environment: endpoints are pod addresses.
            proxy: false,
            signal: ctrl.signal,
            ...(caps !== undefined ? { keepalive: false } : {}),
            ...(tls !== undefined ? { tls: tls.fetch } : {}),
          });
    } catch (err) {
      caps?.endConnection(base);
      retryDone();
      // The client's doing, not the endpoint's: no failure is counted against it.
      if (overLimit) {
        lease?.end(false);
        return BODY_TOO_LARGE;
      }
      lease?.end(true);
      if (req.signal.aborted && !timedOut) return CLIENT_GONE;
      backend.health?.report(base, LOCAL_FAILURE);
      const status = timedOut ? UPSTREAM_TIMEOUT : UPSTREAM_UNREACHABLE;
      const refusedTLS = !timedOut && backend.tls !== undefined && isTLSFailure(err);
      log(
        "warn",
        route.name,
        timedOut ? "upstream timed out" : refusedTLS ? "upstream TLS failed" : "upstream unreachable",
        {
          route: route.name,
          backend: backend.id,
          endpoint: base,
          attempt,
          error: unreachable
            ? `could not connect within ${connectMs} ms (no response headers, and a probe could not connect either)`
            : sendStalled
              ? `upstream took no request bytes for ${sendGapMs} ms`
              : timedOut
                ? `no response headers within ${Math.round(ms)} ms`
                : refusedTLS
                  ? `${String(err)} (expected ${backend.tls?.expects})`
                  : String(err),
        },
      );
      observer?.upstreamFailed?.(backend.id, timedOut ? "timeout" : refusedTLS ? "tls" : "connect");
      // A connect that timed out is a failed connection: retried as one.
      const retries = !timedOut || unreachable || (retry?.codes.includes(504) ?? false);
      if (attempt < attempts && retries && mayRetry()) {
        await backoff(retry?.backoffMs);
        continue;
      }
      return status;
    } finally {
      clearTimeout(timer);
      stopWatch?.();
      req.signal.removeEventListener("abort", onClientGone);
    }
    lease?.end(false);
    retryDone();
    const refused = refusedHead(res);
    if (refused !== undefined) {
      res.body?.cancel().catch(() => {});
      caps?.endConnection(base);
      backend.health?.report(base, LOCAL_FAILURE);
      log("warn", route.name, refused.msg, {
        route: route.name,
        backend: backend.id,
        endpoint: base,
        attempt,
        error: refused.error,
      });
      observer?.upstreamFailed?.(backend.id, "connect");
      return UPSTREAM_UNREACHABLE;
    }
    backend.health?.report(base, res.status);
    if (attempt < attempts && retry?.codes.includes(res.status) && mayRetry()) {
      res.body?.cancel().catch(() => {});
      caps?.endConnection(base);
      await backoff(retry.backoffMs);
      continue;
    }
    return caps === undefined ? res : heldConnection(res, () => caps.endConnection(base));
  }
}

/** `res`, its connection counted until its body ends (a Content-Length goes: Bun frames our stream). */
function heldConnection(res: Response, end: () => void): Response {
  if (res.body === null) {
    end();
    return res;
  }
  const held = new Response(endingStream(res.body, end), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
  held.headers.delete("content-length");
  return held;
}

/**
 * Whether a request's body is read whole before it is sent: a Content-Length up to `bytes`, to a backend
 * that takes bytes (h2c backends take a stream only: upstream-h2c.ts). Other bodies are streamed.
 */
export function readsWhole(req: Request, h2c: boolean, bytes: number): boolean {
  if (h2c || req.body === null) return false;
  const cl = req.headers.get("content-length");
  if (cl === null) return false;
  // Repeated identical fields arrive joined (`5, 5`); singleContentLength sends them as one.
  const comma = cl.indexOf(",");
  const length = Number(comma < 0 ? cl : cl.slice(0, comma));
  return length > 0 && length <= bytes;
}

/**
 * Repeated Content-Length fields reach us joined (`5, 5`), which fetch cannot send. Identical ones are one
 * length (RFC 9110 §8.6; the raw front takes them so): sent as one field. Differing ones never get here
 * (Bun.serve answers them 400); if they did, false: nothing is sent.
 */
function singleContentLength(h: Headers): boolean {
  const cl = h.get("content-length");
  if (cl === null || !cl.includes(",")) return true;
  const values = cl.split(",").map((v) => v.trim());
  if (values.some((v) => v !== values[0])) return false;
  h.set("content-length", values[0] as string);
  return true;
}

/** The size of a response's head as sent (status line aside): `name: value\r\n` per field. */
/**
 * Why an upstream response head cannot be relayed, as the raw front's parser refuses it
 * (http1/response-head.ts): over the size limit (fetch takes any size, so it is measured here), or a
 * transfer coding other than chunked, whose bytes fetch passes on still coded (nginx: 502 too).
 */
function refusedHead(res: Response): { msg: string; error: string } | undefined {
  let n = 0;
  for (const [name, value] of res.headers) n += name.length + value.length + 4;
  if (n > MAX_RESPONSE_HEAD_BYTES)
    return {
      msg: "upstream response head too large",
      error: `response head over ${MAX_RESPONSE_HEAD_BYTES} bytes`,
    };
  const te = res.headers.get("transfer-encoding");
  if (te !== null && te.trim().toLowerCase() !== "chunked")
    return {
      msg: "upstream sent an unknown transfer coding",
      error: `Transfer-Encoding: ${te.slice(0, 64)}`,
    };
  return undefined;
}

/** A time limit in ms: 0 (Gateway API `0s`) and negative values mean none. */
export function limit(ms: number): number {
  return ms > 0 ? ms : Number.POSITIVE_INFINITY;
}

/** Whether a route's time limits may outlast `idleMs` (the listener's idle timeout, which Bun applies
 * to a connection whose request is waiting for us): then the handler lifts it for that wait. */
export function outlastsIdle(route: CompiledRoute, defaultTimeoutMs: number, idleMs: number): boolean {
  const t = route.timeouts;
  if (t?.requestMs) return t.requestMs > idleMs;
  const attempt = limit(t?.backendRequestMs ?? t?.requestMs ?? defaultTimeoutMs);
  return attempt * (1 + (route.retry?.attempts ?? 0)) > idleMs;
}

function backoff(ms: number | undefined): Promise<void> | undefined {
  return ms !== undefined && ms > 0 ? Bun.sleep(ms) : undefined;
}

/** Makes an upstream response fit to send on: this hop's headers removed, Server named when missing. */
export function prepareClientResponse(res: Response, serverHeader: string): Response {
  const h = res.headers;
  stripHopByHop(h);
  if (!h.has("server")) h.set("server", serverHeader);
  return res;
}
