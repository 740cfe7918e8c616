/**
 * A raw HTTP/1.1 client for tests that must send exactly the bytes an attacker would (fetch normalises
 * `..`, encodes `\`…) or see the response framing fetch hides (Content-Length vs chunked).
 * It writes without half-closing: Bun.serve drops the answer to an async handler when the client
 * shuts its write side first.
 */
import { connect } from "node:net";

export interface WireResponse {
  readonly status: number;
  /** Lower-case name → values joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** Body bytes after de-chunking. */
  readonly body: string;
  /** The head exactly as received. */
  readonly head: string;
}

/** Sends `bytes` on a fresh connection and reads until the server closes it (send `Connection: close`). */
export function wireExchange(port: number, bytes: string, timeoutMs = 5000): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(bytes));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error("wire exchange timed out")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      try {
        resolve(parseWire(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** `GET <target>` with a Host header (or none when `host` is null) and Connection: close. */
export function wireGet(
  port: number,
  target: string,
  host: string | null = "test.example",
): Promise<WireResponse> {
  const hostLine = host === null ? "" : `Host: ${host}\r\n`;
  return wireExchange(port, `GET ${target} HTTP/1.1\r\n${hostLine}Connection: close\r\n\r\n`);
}

export function parseWire(raw: Buffer): WireResponse {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`no response head in ${raw.length} bytes`);
  const head = raw.subarray(0, end).toString("latin1");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    const k = l.slice(0, i).toLowerCase();
    const v = l.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  let body = raw.subarray(end + 4);
  if (headers["transfer-encoding"]?.includes("chunked")) body = dechunk(body);
  return { status, headers, body: body.toString("utf8"), head };
}

function dechunk(buf: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const lineEnd = buf.indexOf("\r\n", pos);
    if (lineEnd < 0) break;
    const size = Number.parseInt(buf.subarray(pos, lineEnd).toString(), 16);
    if (!size) break;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
