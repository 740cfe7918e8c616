/**
 * The upstream of the compression suite, on raw sockets so every framing is exact. Paths:
 * `/json/<n>` (Content-Length, application/json, a strong ETag, Accept-Ranges), `/chunked/<n>` (text/plain
 * in 4 KiB chunks), `/close/<n>` (text/html until close), `/small` (100 bytes), `/image/<n>` (image/png),
 * `/encoded/<n>` (already gzip), `/no-transform/<n>`, `/vary/<n>` (`Vary: Origin`), `/status/<code>`
 * (204, 304: no body), `/partial/<n>` (206 with Content-Range), `/slow/<tag>` (a chunk, then the rest only
 * once the test releases `tag`), `/random/<n>` (incompressible, chunked, written as the gateway takes it;
 * `written` counts what it took). Bodies are text of `i mod 26` letters, so they compress well.
 */
import { gzipSync } from "node:zlib";
import type { Socket } from "bun";

interface Conn {
  rest: Buffer | undefined;
  /** More to produce once `rest` is out (the random stream). */
  more: (() => Buffer | undefined) | undefined;
  end: boolean;
}

export function letters(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = 97 + (i % 26);
  return b;
}

function chunked(body: Buffer, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) {
    const piece = body.subarray(at, at + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from("\r\n"));
  }
  return Buffer.concat([...parts, Buffer.from("0\r\n\r\n")]);
}

export function startCompressionBackend() {
  const slow = new Map<string, () => void>();
  const waiting = new Map<string, Socket<Conn>>();
  const stats = { randomWritten: 0 };
  const flush = (s: Socket<Conn>) => {
    for (;;) {
      const c = s.data;
      if (c.rest === undefined) c.rest = c.more?.();
      if (c.rest === undefined) {
        if (c.end) s.end();
        return;
      }
      const n = s.write(c.rest);
      if (c.more !== undefined) stats.randomWritten += Math.max(n, 0);
      if (n < 0 || n < c.rest.length) {
        c.rest = n < 0 ? undefined : c.rest.subarray(n);
        return;
      }
      c.rest = undefined;
    }
  };
  const answer = (s: Socket<Conn>, method: string, path: string) => {
    const [, kind = "", arg = "0"] = /^\/([\w-]+)\/?([\w-]*)/.exec(path) ?? [];
    const n = Number(arg) || 0;
    let head = "HTTP/1.1 200 OK\r\n";
    let body: Buffer = letters(n);
    switch (kind) {
      case "json":
        head += `Content-Type: application/json\r\nETag: "v1"\r\nAccept-Ranges: bytes\r\nContent-Length: ${n}\r\n\r\n`;
        break;
      case "chunked":
        head += "Content-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n";
        body = chunked(body, 4096);
        break;
      case "close":
        head += "Content-Type: text/html\r\nConnection: close\r\n\r\n";
        s.data.end = true;
        break;
      case "small":
        body = letters(100);
        head += "Content-Type: text/plain\r\nContent-Length: 100\r\n\r\n";
        break;
      case "image":
        head += `Content-Type: image/png\r\nContent-Length: ${n}\r\n\r\n`;
        break;
      case "encoded":
        body = gzipSync(letters(n));
        head += `Content-Type: text/plain\r\nContent-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n`;
        break;
      case "no-transform":
        head += `Content-Type: text/plain\r\nCache-Control: public, no-transform\r\nContent-Length: ${n}\r\n\r\n`;
        break;
      case "vary":
        head += `Content-Type: text/plain\r\nVary: Origin\r\nContent-Length: ${n}\r\n\r\n`;
        break;
      case "status":
        head = `HTTP/1.1 ${n} X\r\nContent-Type: text/plain\r\nETag: "v1"\r\n\r\n`;
        body = Buffer.alloc(0);
        break;
      case "partial":
        head = `HTTP/1.1 206 Partial Content\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-${n - 1}/${n * 2}\r\nContent-Length: ${n}\r\n\r\n`;
        break;
      case "slow": {
        head += "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
        const first = letters(2000);
        body = Buffer.concat([Buffer.from(`${first.length.toString(16)}\r\n`), first, Buffer.from("\r\n")]);
        waiting.set(arg, s);
        slow.set(arg, () => {
          s.data.rest = chunked(letters(3000), 3000);
          flush(s);
        });
        break;
      }
      case "random": {
        head += "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
        let left = n;
        s.data.more = () => {
          if (left <= 0) return undefined;
          const size = Math.min(64 * 1024, left);
          left -= size;
          const piece = Buffer.from(crypto.getRandomValues(new Uint8Array(size)));
          const out = Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece, Buffer.from("\r\n")]);
          return left <= 0 ? Buffer.concat([out, Buffer.from("0\r\n\r\n")]) : out;
        };
        body = Buffer.alloc(0);
        break;
      }
      default:
        head = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        body = Buffer.alloc(0);
    }
    s.data.rest = Buffer.concat([Buffer.from(head, "latin1"), method === "HEAD" ? Buffer.alloc(0) : body]);
    flush(s);
  };
  const server = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { rest: undefined, more: undefined, end: false };
      },
      data(s, chunk) {
        const line = chunk.toString("latin1");
        const m = /^([A-Z]+) (\S+) /.exec(line);
        if (m !== null) answer(s, m[1] as string, m[2] as string);
      },
      drain: flush,
    },
  });
  return {
    port: server.port,
    stats,
    /** Sends the rest of `/slow/<tag>`. */
    release: (tag: string) => slow.get(tag)?.(),
    stop: () => server.stop(true),
  };
}
