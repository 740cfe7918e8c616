/**
 * Cleartext HTTP/2 with prior knowledge to backends whose appProtocol is `kubernetes.io/h2c` (gRPC-ish
 * servers that speak nothing else). Bun's `fetch` speaks only HTTP/1.1 to `http://` URLs, but its
 * `node:http2` client does prior-knowledge h2c (`http2.connect("http://ip:port")`; measured against both
 * Bun's and Node's nghttp2 servers). One session per endpoint carries every request to it as streams.
 *
 * `h2cFetch` has `fetch`'s contract so the forwarder's timeouts, retries and client-abort handling apply
 * unchanged: it resolves with a streaming Response once the response headers arrive and rejects when the
 * stream fails before that. Bodies stream both ways with backpressure (pause/resume on the h2 stream).
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from "node:http2";

const sessions = new Map<string, ClientHttp2Session>();

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

function sessionFor(base: string): ClientHttp2Session {
  const cur = sessions.get(base);
  if (cur !== undefined && !cur.closed && !cur.destroyed) return cur;
  const s = connect(base);
  const forget = () => {
    if (sessions.get(base) === s) sessions.delete(base);
  };
  s.on("close", forget);
  s.on("goaway", forget);
  // Errors reach the streams that were using the session; the session itself is only dropped.
  s.on("error", forget);
  sessions.set(base, s);
  return s;
}

export interface H2cInit {
  readonly method: string;
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  readonly signal: AbortSignal;
}

/** `base` is `http://ip:port`, `target` the path and query. */
export function h2cFetch(base: string, target: string, init: H2cInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req: Record<string, string> = {
      ":method": init.method,
      ":path": target,
      ":scheme": "http",
      ":authority": init.headers.get("host") ?? base.slice(7),
    };
    init.headers.forEach((v, k) => {
      if (!FORBIDDEN.has(k)) req[k] = v;
    });
    let stream: ClientHttp2Stream;
    try {
      stream = sessionFor(base).request(req, { endStream: init.body === null, signal: init.signal });
    } catch (err) {
      reject(err);
      return;
    }
    // A stream error after the response (a reset mid-body) must not become an uncaught exception.
    stream.on("error", noop);
    stream.once("error", reject);
    stream.once("response", (h) => {
      stream.off("error", reject);
      const status = Number(h[":status"]);
      const headers = new Headers();
      for (const [k, v] of Object.entries(h)) {
        if (k.charCodeAt(0) === 58 || v === undefined) continue;
        if (Array.isArray(v)) for (const x of v) headers.append(k, x);
        else headers.set(k, String(v));
      }
      const empty = init.method === "HEAD" || status === 204 || status === 304;
      if (empty) stream.resume();
      resolve(new Response(empty ? null : bodyOf(stream), { status, headers }));
    });
    if (init.body !== null) void sendBody(init.body, stream);
  });
}

function noop(): void {}

async function sendBody(body: ReadableStream<Uint8Array>, stream: ClientHttp2Stream): Promise<void> {
  try {
    for await (const chunk of body) {
      if (stream.destroyed) return;
      if (!stream.write(chunk)) await new Promise((r) => stream.once("drain", r));
    }
    stream.end();
  } catch {
    if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
  }
}

function bodyOf(stream: ClientHttp2Stream): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
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
      if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
    },
  });
}

/** Closes every h2c session (when the gateway stops). */
export function closeH2cSessions(): void {
  for (const s of sessions.values()) s.close();
  sessions.clear();
}
