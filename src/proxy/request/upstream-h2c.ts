/**
 * Cleartext HTTP/2 with prior knowledge to backends whose appProtocol is `kubernetes.io/h2c` (gRPC-ish
 * servers that speak nothing else). Bun's `fetch` speaks only HTTP/1.1 to `http://` URLs, but its
 * `node:http2` client does prior-knowledge h2c (`http2.connect("http://ip:port")`; measured against both
 * Bun's and Node's nghttp2 servers). One session per endpoint carries every request to it as streams.
 *
 * `h2cFetch` has `fetch`'s contract so the forwarder's timeouts, retries and client-abort handling apply
 * unchanged: it resolves with a streaming Response once the response headers arrive and rejects when the
 * stream fails before that. Bodies stream both ways with backpressure (pause/resume on the h2 stream).
 *
 * Trailers (gRPC's `grpc-status` and `grpc-message` come in them): a fetch Response has none, so the
 * trailer fields the backend sends are kept beside the Response's body stream (`responseTrailers`), which
 * the HTTP/2 writer (h2/bridge.ts) sends on after the body. Keyed by the body stream, not the Response:
 * a Response rebuilt around the same body keeps them. A response whose head ends the stream (gRPC's
 * "Trailers-Only" errors) has a null body, so that it leaves the same way. Bun's node:http2 does both:
 * measured in docs/http.md ("Trailers").
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from "node:http2";
import { type CompiledBackendTLS, tlsOrigin } from "../backend-tls/options.ts";

const sessions = new Map<string, ClientHttp2Session>();

/** Trailer fields of the upstream responses whose bodies are being read, by body stream. */
const trailersByBody = new WeakMap<ReadableStream<Uint8Array>, Record<string, string | string[]>>();

/** How to read the trailer fields a client sent after a request's body, by Request (h2/bridge.ts). */
const trailersByRequest = new WeakMap<Request, () => Record<string, string | string[] | undefined>>();

/**
 * Tells h2cFetch where the trailer fields of `request` will be once its body has been read: a client's
 * over HTTP/2 (node:http2 gives them after the body). A fetch Request has no trailers of its own.
 */
export function keepRequestTrailers(
  request: Request,
  read: () => Record<string, string | string[] | undefined>,
): void {
  trailersByRequest.set(request, read);
}

/**
 * The trailer fields the backend sent after `res`'s body, once that body has been read to its end;
 * undefined when it sent none (or `res` did not come from an h2c backend).
 */
export function responseTrailers(res: Response): Record<string, string | string[]> | undefined {
  return res.body === null ? undefined : trailersByBody.get(res.body);
}

/** Connection-specific headers HTTP/2 forbids (RFC 9113 §8.2.2); hop-by-hop ones are already gone. */
const FORBIDDEN = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
]);

/** The session to `base`, in TLS (ALPN h2) with `tls`'s settings when given; kept per base and settings. */
function sessionFor(base: string, tls: CompiledBackendTLS | undefined): ClientHttp2Session {
  const id = tls === undefined ? base : `${tls.key} ${base}`;
  const cur = sessions.get(id);
  if (cur !== undefined && !cur.closed && !cur.destroyed) return cur;
  const s = tls === undefined ? connect(base) : connect(tlsOrigin(base), tls.http2);
  const forget = () => {
    if (sessions.get(id) === s) sessions.delete(id);
  };
  s.on("close", forget);
  s.on("goaway", forget);
  // Errors reach the streams that were using the session; the session itself is only dropped.
  s.on("error", forget);
  sessions.set(id, s);
  return s;
}

export interface H2cInit {
  readonly method: string;
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  readonly signal: AbortSignal;
  /** The client's request, whose trailer fields (keepRequestTrailers) follow the body upstream. */
  readonly request?: Request;
  /** HTTP/2 over TLS to the backend, with these settings; absent: h2c. */
  readonly tls?: CompiledBackendTLS;
}

/** `base` is `http://ip:port`, `target` the path and query. */
export function h2cFetch(base: string, target: string, init: H2cInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req: Record<string, string> = {
      ":method": init.method,
      ":path": target,
      ":scheme": init.tls === undefined ? "http" : "https",
      ":authority": init.headers.get("host") ?? base.slice(7),
    };
    init.headers.forEach((v, k) => {
      if (!FORBIDDEN.has(k)) req[k] = v;
    });
    // The one TE HTTP/2 allows; gRPC servers may refuse a call without it (gRPC over HTTP/2, "Requests").
    if (init.headers.get("content-type")?.startsWith("application/grpc")) req.te = "trailers";
    let stream: ClientHttp2Stream;
    try {
      const trailers =
        init.body === null || init.request === undefined ? undefined : trailersByRequest.get(init.request);
      stream = sessionFor(base, init.tls).request(req, {
        endStream: init.body === null,
        signal: init.signal,
        ...(trailers !== undefined ? { waitForTrailers: true } : {}),
      });
      // Read once the body has been sent, when the client's trailers are in (none: an empty block).
      if (trailers !== undefined) stream.once("wantTrailers", () => sendTrailers(stream, trailers()));
    } catch (err) {
      reject(err);
      return;
    }
    // A stream error after the response (a reset mid-body) must not become an uncaught exception.
    stream.on("error", noop);
    stream.once("error", reject);
    stream.once("response", (h, flags) => {
      stream.off("error", reject);
      const status = Number(h[":status"]);
      const headers = new Headers();
      for (const [k, v] of Object.entries(h)) {
        if (k.charCodeAt(0) === 58 || v === undefined) continue;
        if (Array.isArray(v)) for (const x of v) headers.append(k, x);
        else headers.set(k, String(v));
      }
      // END_STREAM on the head: nothing follows, not even trailers (gRPC "Trailers-Only").
      const ended = (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0;
      const empty = ended || init.method === "HEAD" || status === 204 || status === 304;
      if (empty) stream.resume();
      resolve(new Response(empty ? null : bodyOf(stream), { status, headers }));
    });
    if (init.body !== null) void sendBody(init.body, stream);
  });
}

function noop(): void {}

/** What `reset` destroys a stream with to send RST_STREAM CANCEL: an AbortError, which Bun maps to CANCEL. */
const CANCELLED = Object.assign(new Error("stream cancelled"), { name: "AbortError", code: "ABORT_ERR" });

/**
 * Resets `stream` (CANCEL, or INTERNAL_ERROR) without ending it first. Bun 1.4.5's `close(code)` and
 * `destroy()` send an empty DATA frame with END_STREAM before the RST_STREAM (seen on the wire): the
 * backend would read a request body cut short as whole, and answer it. `destroy(err)` sends RST_STREAM
 * alone (docs/http.md, "gRPC").
 */
function reset(stream: ClientHttp2Stream, cancel: boolean): void {
  if (!stream.destroyed) stream.destroy(cancel ? CANCELLED : new Error("trailers not sent"));
}

function sendTrailers(
  stream: ClientHttp2Stream,
  fields: Record<string, string | string[] | undefined>,
): void {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(fields))
    if (v !== undefined && k.charCodeAt(0) !== 58 && !FORBIDDEN.has(k)) out[k] = v;
  try {
    stream.sendTrailers(out);
  } catch {
    reset(stream, false);
  }
}

/** Resolves once pending I/O callbacks have run: by then a body's end that came with its last bytes is in. */
const settled = () => new Promise<undefined>((resolve) => setImmediate(resolve));

/**
 * Streams `body` to the backend. Bun 1.4.5 with `waitForTrailers` sends an empty DATA frame without
 * END_STREAM when `end()` follows a write already flushed (seen on the wire); Node's nghttp2 counts such
 * frames as invalid and closes the session after 1000 of them (ERR_HTTP2_TOO_MANY_INVALID_FRAMES, a flood
 * guard), failing the calls in flight on it. So a chunk whose body has ended by the time it is sent leaves
 * with the end (`end(chunk)`: no empty frame), and empty chunks are not written.
 */
async function sendBody(body: ReadableStream<Uint8Array>, stream: ClientHttp2Stream): Promise<void> {
  const reader = body.getReader();
  try {
    let next = reader.read();
    for (;;) {
      const { done, value } = await next;
      if (done) return void stream.end();
      if (stream.destroyed) return void reader.cancel().catch(noop);
      next = reader.read();
      if (value.byteLength === 0) continue;
      const after = await Promise.race([next, settled()]);
      if (after?.done) return void stream.end(value);
      if (!stream.write(value)) await new Promise((r) => stream.once("drain", r));
    }
  } catch {
    reset(stream, true);
  }
}

function bodyOf(stream: ClientHttp2Stream): ReadableStream<Uint8Array> {
  const body: ReadableStream<Uint8Array> = new ReadableStream<Uint8Array>({
    start(c) {
      // Node and Bun emit `trailers` before `end`: they are known once the body has been read.
      stream.once("trailers", (t) => {
        const fields: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(t)) if (v !== undefined && k.charCodeAt(0) !== 58) fields[k] = v;
        trailersByBody.set(body, fields);
      });
      stream.on("data", (chunk: Buffer) => {
        c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((c.desiredSize ?? 0) <= 0) stream.pause();
      });
      stream.once("end", () => c.close());
      stream.once("error", (err) => c.error(err));
    },
    pull() {
      stream.resume();
    },
    cancel() {
      reset(stream, true);
    },
  });
  return body;
}

/** Closes every h2c session (when the gateway stops). */
export function closeH2cSessions(): void {
  for (const s of sessions.values()) s.close();
  sessions.clear();
}
