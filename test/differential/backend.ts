/**
 * The differential run's upstreams: raw sockets (Bun.listen) that keep the exact bytes each request
 * arrived as, so the report can show what a proxy really sent, not what an HTTP library made of it. Each
 * answers `dest=<name>` (how the probe client tells a backend's answer from a proxy's own), keeps the
 * connection alive as a pooled upstream would, and misbehaves on purpose for `/public/fault/<kind>`
 * (FAULTS), the backend-fault probes.
 */
import type { Socket, TCPSocketListener } from "bun";

/** One request as a backend received it. */
export interface Received {
  /** Arrival order across every backend of one target, so pipelined requests keep their order. */
  readonly seq: number;
  readonly backend: string;
  readonly requestLine: string;
  readonly method: string;
  readonly target: string;
  /** The Host field as forwarded (`""` when none). */
  readonly host: string;
  /** The body with chunked framing removed. */
  readonly body: string;
  /** Head and body exactly as received (latin1). */
  readonly raw: string;
}

/** The backends of one target, numbering what they receive in one sequence. */
export class Recorder {
  private seq = 0;
  readonly log: Received[] = [];

  add(r: Omit<Received, "seq">): void {
    this.log.push({ ...r, seq: this.seq++ });
  }

  /** Everything received since the last call. */
  take(): Received[] {
    return this.log.splice(0);
  }
}

export interface RecordingBackend {
  readonly name: string;
  readonly port: number;
  stop(): void;
}

const ok = (name: string, extra = "") => {
  const body = `dest=${name}`;
  return `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`;
};

/**
 * Upstream misbehaviour by path (`/public/fault/<kind>`), the answer written and whether the backend
 * closes after it. Bodies start `dest=public` where the bytes are a usable answer, so a proxy that relays
 * them shows as having reached the backend.
 */
export const FAULTS: Readonly<Record<string, { readonly answer: string; readonly close: boolean }>> = {
  "cl-te": {
    answer:
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nb\r\ndest=public\r\n0\r\n\r\n",
    close: true,
  },
  "two-cl": {
    answer: "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Length: 5\r\n\r\ndest=public",
    close: true,
  },
  "bad-status": { answer: "HTTP/1.1 2OO OK\r\nContent-Length: 11\r\n\r\ndest=public", close: true },
  "bare-lf": { answer: "HTTP/1.1 200 OK\nContent-Length: 11\n\ndest=public", close: true },
  "no-length": { answer: "HTTP/1.1 200 OK\r\n\r\ndest=public", close: true },
  "short-body": { answer: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndest=public", close: true },
  // A second answer after the first: a proxy that keeps this connection would hand it to the next request.
  "extra-bytes": {
    answer: `${ok("public")}HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\ndest=injected`,
    close: false,
  },
  "early-hints": { answer: `HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n${ok("public")}`, close: true },
  // 101 to a request that asked for no upgrade: what follows is not HTTP, and must not be relayed as if.
  "unasked-101": {
    answer: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\ndest=tunnel",
    close: true,
  },
  "nul-header": { answer: ok("public", "X-Bad: a\0b\r\n"), close: true },
  "space-before-colon": { answer: ok("public", "X-Bad : v\r\n"), close: true },
  "big-head": { answer: ok("public", `X-Big: ${"a".repeat(16 * 1024)}\r\n`), close: true },
  "http09-answer": { answer: "dest=public", close: true },
  "no-answer": { answer: "", close: true },
};

interface Conn {
  buf: string;
}

/** A backend on a free loopback port recording into `recorder`. */
export function startRecordingBackend(name: string, recorder: Recorder): RecordingBackend {
  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { buf: "" };
      },
      data(s, chunk) {
        s.data.buf += Buffer.from(chunk).toString("latin1");
        serve(s, name, recorder);
      },
      close(s) {
        // Bytes the proxy sent that never made a whole request are evidence too.
        if (s.data.buf.length > 0)
          recorder.add({
            backend: name,
            requestLine: `(incomplete) ${s.data.buf.split(/\r?\n/, 1)[0]}`,
            method: "",
            target: "",
            host: "",
            body: "",
            raw: s.data.buf,
          });
      },
      error() {},
    },
  });
  return { name, port: server.port, stop: () => server.stop(true) };
}

/** Answers every whole request buffered on `s`, in order. */
function serve(s: Socket<Conn>, name: string, recorder: Recorder): void {
  for (;;) {
    const req = takeRequest(s.data.buf);
    if (req === undefined) return;
    s.data.buf = s.data.buf.slice(req.length);
    const raw = req.raw;
    const requestLine = raw.split(/\r?\n/, 1)[0] ?? "";
    const [method = "", target = ""] = requestLine.split(" ");
    const host = /\r?\nhost:[ \t]*([^\r\n]*)/i.exec(raw.slice(0, req.headEnd))?.[1]?.trim() ?? "";
    recorder.add({ backend: name, requestLine, method, target, host, body: req.body, raw });
    const fault = /^\/public\/fault\/([\w-]+)/.exec(target)?.[1];
    const spec = fault === undefined ? undefined : FAULTS[fault];
    if (spec !== undefined) {
      if (spec.answer) s.write(spec.answer);
      // The injected answer stays on a live connection for a moment, for a proxy to reuse it (it must not).
      if (spec.close) s.end();
      else setTimeout(() => s.end(), 100);
      return;
    }
    const close = /\r?\nconnection:[^\r\n]*close/i.test(raw.slice(0, req.headEnd));
    s.write(ok(name, close ? "Connection: close\r\n" : ""));
    if (close) {
      s.end();
      return;
    }
  }
}

/**
 * The first whole request in `buf`: its length, raw bytes, head end and decoded body; undefined until
 * it is all there. Framing as a lenient server reads it (the proxies in front produce clean heads).
 */
function takeRequest(
  buf: string,
): { length: number; raw: string; headEnd: number; body: string } | undefined {
  const m = /\r?\n\r?\n/.exec(buf);
  if (m === null) return undefined;
  const headEnd = m.index;
  const bodyStart = headEnd + m[0].length;
  const head = buf.slice(0, headEnd);
  if (/\r?\ntransfer-encoding:[^\r\n]*chunked/i.test(head)) {
    let pos = bodyStart;
    let body = "";
    for (;;) {
      const eol = buf.indexOf("\r\n", pos);
      if (eol < 0) return undefined;
      const size = Number.parseInt(buf.slice(pos, eol), 16);
      if (Number.isNaN(size)) return { length: buf.length, raw: buf, headEnd, body: buf.slice(bodyStart) };
      if (size === 0) {
        // Trailer fields up to an empty line.
        const end = buf.indexOf("\r\n\r\n", eol);
        const stop = buf.startsWith("\r\n", eol + 2) ? eol + 4 : end < 0 ? -1 : end + 4;
        if (stop < 0) return undefined;
        return { length: stop, raw: buf.slice(0, stop), headEnd, body };
      }
      if (buf.length < eol + 2 + size + 2) return undefined;
      body += buf.slice(eol + 2, eol + 2 + size);
      pos = eol + 2 + size + 2;
    }
  }
  const cl = Number(/\r?\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1] ?? 0);
  if (buf.length < bodyStart + cl) return undefined;
  return {
    length: bodyStart + cl,
    raw: buf.slice(0, bodyStart + cl),
    headEnd,
    body: buf.slice(bodyStart, bodyStart + cl),
  };
}
