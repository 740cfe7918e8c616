/**
 * Between `node:http2`'s compatibility API (one request/response pair per HTTP/2 stream, or per HTTP/1.1
 * request when the client did not offer h2) and the listener app, which takes a fetch `Request` and
 * gives a `Response`: the same request path as the Bun.serve listeners, so every route feature behaves
 * the same over HTTP/2. Bodies stream both ways; a client that goes away aborts the Request's signal
 * (the upstream request is cancelled, as on Bun.serve) and cancels the response body.
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { Readable } from "node:stream";
import { limitedLog } from "../../observability/log-limit.ts";
import { markProtocol } from "../request/observer.ts";
import { keepRequestTrailers, responseTrailers } from "../request/upstream-h2c.ts";
import type { ProxyServer } from "../request/websocket/relay.ts";

/** What the request path learns of the client's connection (a TLSSocket, or h2c's link to a raw socket). */
export interface PeerSocket {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly remoteFamily?: string | undefined;
}

/** Connection-specific headers HTTP/2 forbids in a response (RFC 9113 §8.2.2); node throws on them. */
const CONNECTION_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/**
 * The fetch `Request` for a compat request; `host` is the authority the request named. Undefined for a
 * request target that is neither origin-form (`/path`) nor absolute-form (`https://host/path`): 400.
 * `scheme` is the listener's (h2c listeners are `http`).
 */
export function toRequest(
  req: Http2ServerRequest,
  host: string,
  signal: AbortSignal,
  scheme: "http" | "https" = "https",
): Request | undefined {
  let target = req.url;
  if (!target.startsWith("/")) {
    if (!/^https?:\/\//i.test(target) || !URL.canParse(target)) return undefined;
    const u = new URL(target); // absolute-form: routed by the Host header, as Bun.serve does
    target = u.pathname + u.search;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.charCodeAt(0) === 58 || value === undefined) continue; // ":path" and the other pseudo-headers
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  // HTTP/2 carries the authority in :authority; the request path reads Host, as HTTP/1.1 sends it.
  if (!headers.has("host") && host !== "") headers.set("host", host);
  const method = req.method;
  const hasBody = method !== "GET" && method !== "HEAD";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal };
  if (hasBody) {
    init.body = Readable.toWeb(req as unknown as Readable) as unknown as ReadableStream<Uint8Array>;
    init.duplex = "half";
  }
  const request = new Request(`${scheme}://${host || "invalid"}${target}`, init);
  // For the access log (HTTP/1.1, what an unmarked request reads as, is the compat API's fallback).
  if (req.httpVersion !== "1.1") markProtocol(request, `HTTP/${req.httpVersion}`);
  // The client's trailer fields, known once its body has been read, go on to an h2c backend.
  if (hasBody) keepRequestTrailers(request, () => req.trailers);
  return request;
}

/**
 * The subset of Bun's `Server` the request path uses (client address, per-request idle timeout,
 * WebSocket upgrade). HTTP/2 has no `Upgrade`, and WebSocket over this listener's HTTP/1.1 is refused
 * before the app runs (listener.ts), so `upgrade` never succeeds.
 */
export function serverFacade(socketOf: (req: Request) => PeerSocket | undefined): ProxyServer {
  const facade: Pick<ProxyServer, "requestIP" | "timeout" | "upgrade"> = {
    requestIP: (req) => {
      const s = socketOf(req);
      if (s?.remoteAddress === undefined) return null;
      return {
        address: s.remoteAddress,
        port: s.remotePort ?? 0,
        family: s.remoteFamily === "IPv6" ? "IPv6" : "IPv4",
      };
    },
    // Sessions time out as a whole (listener.ts); a long upstream wait is covered by that limit.
    timeout: () => {},
    upgrade: () => false,
  };
  // The request path calls only these three (handler.ts, websocket/relay.ts); the rest of Server is not there.
  return facade as unknown as ProxyServer;
}

/**
 * Writes `out` to the client, streaming its body with backpressure, then the backend's trailer fields
 * when it sent some (an h2c backend's: gRPC status). `gone` is aborted when the client
 * goes away (the response's `close` before it finished): a destroyed HTTP/2 stream neither throws on
 * write nor emits `close` again, so that signal, not the response, says when to stop. Resolves when the
 * response is written or abandoned; never rejects.
 */
export async function writeResponse(
  res: Http2ServerResponse,
  out: Response,
  head: boolean,
  gone: AbortSignal,
): Promise<void> {
  const body = out.body;
  if (gone.aborted) {
    if (body !== null) void body.cancel().catch(() => {});
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of out.headers) {
    if (CONNECTION_HEADERS.has(name) || name === "set-cookie") continue;
    headers[name] = value;
  }
  const cookies = out.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  const reader = body === null || head ? undefined : body.getReader();
  // A body that never ends (a stream, a long poll) must stop with the client: cancelling ends the read.
  const cancel = () => void reader?.cancel().catch(() => {});
  gone.addEventListener("abort", cancel);
  try {
    if (body === null && !head && res.stream !== undefined && headers["grpc-status"] !== undefined) {
      // gRPC "Trailers-Only": the status in a head that ends the stream, as gRPC clients read it (a head
      // then an empty DATA frame, which compat's writeHead + end sends, is a call without status).
      res.stream.respond({ ":status": out.status, ...headers }, { endStream: true });
      return;
    }
    res.writeHead(out.status, headers);
    if (reader === undefined) {
      if (body !== null) void body.cancel().catch(() => {});
      res.end();
      return;
    }
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (gone.aborted) {
        void reader.cancel().catch(() => {});
        return;
      }
      if (!res.write(value)) await drained(res, gone);
    }
    // The backend's trailer fields (gRPC's status), known now that its body ended (upstream-h2c.ts).
    const trailers = responseTrailers(out);
    if (trailers !== undefined && !gone.aborted) res.addTrailers(trailers);
    if (!gone.aborted) res.end();
  } catch (err) {
    // The upstream body failed mid-way (or the client went away): the status may be sent, so reset.
    if (reader !== undefined) void reader.cancel().catch(() => {});
    resetResponse(res);
    // Never silent: a backend that reset its stream, or sent what the h2c client refused (a trailer
    // block over its limit: FRAME_SIZE_ERROR), is the backend's fault, not the client's.
    if (!gone.aborted)
      limitedLog("warn", "http2", "upstream response failed mid-body: stream reset", {
        error: err instanceof Error ? err.message : String(err),
      });
  } finally {
    gone.removeEventListener("abort", cancel);
  }
}

/**
 * Cuts a response whose head is out, so that the client sees it incomplete: RST_STREAM INTERNAL_ERROR
 * over HTTP/2, the connection closed over HTTP/1.1. Bun 1.4.5's `close(code)` and `destroy()` on a
 * server stream (and compat `res.destroy()`) end it with END_STREAM instead (measured against Node's
 * client: a clean end, `rstCode` 0): a body cut short would look whole. `destroy(err)` sends RST_STREAM.
 */
export function resetResponse(res: Http2ServerResponse): void {
  if (res.stream === undefined) res.destroy();
  else if (!res.stream.destroyed) res.stream.destroy(new Error("response cut short"));
}

/** Until the client can take more, or is gone. */
function drained(res: Http2ServerResponse, gone: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      gone.removeEventListener("abort", done);
      resolve();
    };
    res.on("drain", done);
    gone.addEventListener("abort", done);
    if (gone.aborted) done();
  });
}
