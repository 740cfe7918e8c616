/**
 * Load for the https section's full-handshake rows: `connections` loops, each opening a new TLS
 * connection per request (`Connection: close`), taking the answer and closing, for `seconds`.
 *
 * Why not wrk: wrk keeps a connection's TLS session across reconnects and offers it again, and Gatehouse
 * (BoringSSL) resumes it, so wrk with `Connection: close` measures abbreviated handshakes. Why not ab: it
 * leaves Nagle on, and since BoringSSL sends nothing after its handshake flight the request then waits
 * for a delayed ACK (~40 ms) on Gatehouse and not on nginx, whose session tickets carry the ACK. Bun's
 * client sockets set TCP_NODELAY and keep no session between connections: every request is a full
 * handshake, as a new visitor's (https.ts checks that against a server that would resume).
 *
 * Usage (as its own process, like wrk): bun bench/handshakes.ts JSON-OPTIONS; prints one JSON line
 * with the fields of WrkResult. Latency counts the whole request: connect and handshake included.
 */
import { median } from "./stats.ts";
import type { WrkResult } from "./wrk.ts";

export interface HandshakeOptions {
  readonly port: number;
  /** Host field and SNI. */
  readonly host: string;
  readonly path: string;
  readonly seconds: number;
  readonly connections: number;
}

/** Spawn this file as its own process (so its CPU is not the bench runner's) and read its summary. */
export async function runHandshakes(opts: HandshakeOptions): Promise<WrkResult> {
  const proc = Bun.spawn(["bun", import.meta.path, JSON.stringify(opts)], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`handshake load failed: ${err || out}`);
  return JSON.parse(out) as WrkResult;
}

/**
 * The whole response's size once its head is complete in `buf`: undefined before that, and without a
 * Content-Length (the bench's answers always carry one).
 */
export function responseLength(buf: string): number | undefined {
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(buf.slice(0, end));
  return m ? end + 4 + Number(m[1]) : undefined;
}

/** The summary of one run: completed requests over the elapsed time, and latency percentiles. */
export function summarise(latenciesMs: readonly number[], elapsedMs: number, errors: number): WrkResult {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    rps: (sorted.length * 1000) / elapsedMs,
    requests: sorted.length,
    p50Ms: median(sorted),
    p99Ms: at(0.99),
    errors,
  };
}

async function main(opts: HandshakeOptions): Promise<void> {
  const request = `GET ${opts.path} HTTP/1.1\r\nHost: ${opts.host}\r\nConnection: close\r\n\r\n`;
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const once = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      let buf = "";
      let done = false;
      const finish = (ok: boolean) => {
        if (done) return;
        done = true;
        if (ok) latencies.push(performance.now() - t0);
        else errors++;
        resolve();
      };
      Bun.connect({
        hostname: "127.0.0.1",
        port: opts.port,
        tls: { rejectUnauthorized: false, serverName: opts.host },
        socket: {
          open: (s) => {
            s.write(request);
          },
          data: (s, chunk) => {
            buf += chunk.toString("latin1");
            const total = responseLength(buf);
            if (total === undefined || buf.length < total) return;
            finish(buf.startsWith("HTTP/1.1 2"));
            s.end();
          },
          close: () => finish(false),
          error: () => finish(false),
          connectError: () => finish(false),
        },
      }).catch(() => finish(false));
    });
  const loop = async () => {
    while (performance.now() < deadline) await once();
  };
  await Promise.all(Array.from({ length: opts.connections }, loop));
  process.stdout.write(`${JSON.stringify(summarise(latencies, performance.now() - started, errors))}\n`);
}

if (import.meta.main) await main(JSON.parse(process.argv[2] ?? "{}") as HandshakeOptions);
