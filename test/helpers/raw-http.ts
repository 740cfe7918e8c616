import { connect, type Socket } from "node:net";
import { connect as connectTls, type PeerCertificate } from "node:tls";

/** One HTTP/1.1 exchange as it happened on the wire, for assertions a fetch() client would hide. */
export interface RawResponse {
  /** `HTTP/1.1` from the status line. */
  readonly proto: string;
  readonly status: number;
  /** Header lines in wire order, names as sent. */
  readonly headerList: readonly (readonly [string, string])[];
  /** Lower-cased name → values joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** Body with chunked framing removed. */
  readonly body: string;
  /** The head exactly as received. */
  readonly head: string;
}

export interface RawRequest {
  readonly host: string;
  readonly port: number;
  /** Written verbatim after the method: `/path?q`, or an absolute-form or malformed target on purpose. */
  readonly target: string;
  readonly method?: string;
  /** Header lines in order; no Host is added when one is given here (use `["Host", ""]` for an empty one). */
  readonly headers?: readonly (readonly [string, string])[];
  readonly body?: string;
  readonly timeoutMs?: number;
  /** Speak TLS: SNI `servername`, trusting only `ca` when given (else any certificate). */
  readonly tls?: {
    readonly servername?: string;
    readonly ca?: string;
    /** Replaces Node's hostname check (e.g. with Go's rules, which accept `*.org`). */
    readonly checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
  };
}

/**
 * Send one request on a fresh TCP connection with `Connection: close` and read until the server closes.
 * Nothing is normalised on the way out, so tests can send exactly the bytes an attacker would.
 */
export function rawRequest(req: RawRequest): Promise<RawResponse> {
  const headers = [...(req.headers ?? [])];
  if (!headers.some(([n]) => n.toLowerCase() === "host"))
    headers.unshift(["Host", `${req.host}:${req.port}`]);
  if (!headers.some(([n]) => n.toLowerCase() === "connection")) headers.push(["Connection", "close"]);
  if (req.body !== undefined) headers.push(["Content-Length", String(Buffer.byteLength(req.body))]);
  const head = `${req.method ?? "GET"} ${req.target} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join("")}\r\n`;
  // write, not end: Bun drops the answer of an async handler when the client half-closes first.
  const bytes = head + (req.body ?? "");
  return exchange((send) => {
    const socket = req.tls
      ? connectTls(
          {
            host: req.host,
            port: req.port,
            ...(req.tls.servername ? { servername: req.tls.servername } : {}),
            ...(req.tls.ca ? { ca: req.tls.ca } : { rejectUnauthorized: false }),
            ...(req.tls.checkServerIdentity ? { checkServerIdentity: req.tls.checkServerIdentity } : {}),
            ALPNProtocols: ["http/1.1"],
          },
          () => send(bytes),
        )
      : connect({ host: req.host, port: req.port }, () => send(bytes));
    return socket;
  }, req.timeoutMs ?? 10_000);
}

/** Connects with `open`, writes once connected, and parses what arrives until the server closes. */
function exchange(open: (send: (bytes: string) => void) => Socket, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket: Socket = open((bytes) => socket.write(bytes));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error("raw exchange timed out")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/**
 * Sends `bytes` exactly as given on a fresh connection and reads until the server closes it (send
 * `Connection: close`), for requests `rawRequest` cannot express (HTTP/1.0, two Host lines, smuggling).
 */
export function wireExchange(port: number, bytes: string, timeoutMs = 5000): Promise<RawResponse> {
  return exchange((send) => connect({ host: "127.0.0.1", port }, () => send(bytes)), timeoutMs);
}

/** `GET <target>` on 127.0.0.1 with a Host header (none when `host` is null) and Connection: close. */
export function wireGet(
  port: number,
  target: string,
  host: string | null = "test.example",
): Promise<RawResponse> {
  const hostLine = host === null ? "" : `Host: ${host}\r\n`;
  return wireExchange(port, `GET ${target} HTTP/1.1\r\n${hostLine}Connection: close\r\n\r\n`);
}

/** Parse one HTTP/1.1 response; throws on anything that is not one. */
export function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0)
    throw new Error(`no complete response head in ${raw.length} bytes: ${raw.toString().slice(0, 200)}`);
  const head = raw.subarray(0, end).toString("latin1");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const m = /^(HTTP\/\d\.\d) (\d{3})/.exec(statusLine);
  if (!m) throw new Error(`bad status line: ${statusLine}`);
  const headerList = lines.map((l) => {
    const i = l.indexOf(":");
    return [l.slice(0, i), l.slice(i + 1).trim()] as const;
  });
  const headers: Record<string, string> = {};
  for (const [n, v] of headerList) {
    const k = n.toLowerCase();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  let body = raw.subarray(end + 4);
  if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) body = dechunk(body);
  return {
    proto: m[1] as string,
    status: Number(m[2]),
    headerList,
    headers,
    body: body.toString("utf8"),
    head,
  };
}

function dechunk(buf: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const lineEnd = buf.indexOf("\r\n", pos);
    if (lineEnd < 0) break;
    const size = Number.parseInt(buf.subarray(pos, lineEnd).toString(), 16);
    if (!size) break;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** A response read off a kept-alive connection: its body as bytes, chunked framing removed. */
export interface FramedResponse {
  readonly status: number;
  /** Lower-cased name → values joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/**
 * Sends `requests` (whole request bytes) one after another on ONE connection to 127.0.0.1:`port`, each
 * once the previous response is complete (by its Content-Length or chunked framing; no trailers), and
 * resolves with the responses read: fewer than the requests means the server closed the connection
 * instead of keeping it for the next one.
 */
export function sequentialExchanges(
  port: number,
  requests: readonly string[],
  timeoutMs = 10_000,
): Promise<FramedResponse[]> {
  return new Promise((resolve, reject) => {
    const responses: FramedResponse[] = [];
    let buf = Buffer.alloc(0);
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(requests[0] ?? ""));
    let timedOut = false;
    socket.setTimeout(timeoutMs, () => {
      timedOut = true;
      socket.destroy();
    });
    socket.on("data", (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      try {
        for (let r = framedResponse(buf); r !== undefined; r = framedResponse(buf)) {
          responses.push(r.response);
          buf = buf.subarray(r.length);
          if (responses.length === requests.length) {
            socket.destroy();
            return;
          }
          socket.write(requests[responses.length] ?? "");
        }
      } catch (err) {
        socket.destroy();
        reject(err);
      }
    });
    // A reset is a close too (the responses so far tell); only the time limit is a failure of its own.
    socket.on("error", () => {});
    socket.on("close", () =>
      timedOut ? reject(new Error("sequential exchanges timed out")) : resolve(responses),
    );
  });
}

/** The first complete response in `buf` and its length on the wire; undefined while it is incomplete. */
function framedResponse(buf: Buffer): { response: FramedResponse; length: number } | undefined {
  const headEnd = buf.indexOf("\r\n\r\n");
  if (headEnd < 0) return undefined;
  const { status, headers } = parseResponse(buf.subarray(0, headEnd + 4));
  const at = headEnd + 4;
  if (!headers["transfer-encoding"]?.toLowerCase().includes("chunked")) {
    const end = at + Number(headers["content-length"] ?? 0);
    return buf.length < end
      ? undefined
      : { response: { status, headers, body: buf.subarray(at, end) }, length: end };
  }
  const parts: Buffer[] = [];
  for (let pos = at; ; ) {
    const lineEnd = buf.indexOf("\r\n", pos);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buf.subarray(pos, lineEnd).toString("latin1"), 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size line at byte ${pos}`);
    if (size === 0) {
      const end = lineEnd + 4;
      return buf.length < end
        ? undefined
        : { response: { status, headers, body: Buffer.concat(parts) }, length: end };
    }
    if (buf.length < lineEnd + 4 + size) return undefined;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 4 + size;
  }
}
