/**
 * h2load (Debian's nghttp2-client) as the load of HTTP/2 rows: wrk speaks HTTP/1.1 only. Its summary
 * has no percentiles, so each run writes h2load's per-request log (`--log-file`: start, status, µs) and
 * p50/p99 are read from it. The result has wrk's shape, so the rows share `wrkTable` and `measuredRun`.
 */
import { rm } from "node:fs/promises";
import type { WrkResult } from "./wrk.ts";

export interface H2loadOptions {
  /** `http://127.0.0.1:PORT/path`: h2c with prior knowledge. */
  readonly url: string;
  readonly seconds: number;
  /** Connections, and streams open at once on each (`-m`). */
  readonly connections: number;
  readonly streams: number;
  /** A file whose bytes are every request's body (`-d`: sent as POST); none: GET. */
  readonly body?: string;
  /** HTTP/1.1 instead of HTTP/2 (`--h1`): the same tool for both protocols' rows. */
  readonly h1?: boolean;
  readonly headers: Readonly<Record<string, string>>;
  /** Where the per-request log goes (removed after parsing). */
  readonly logFile: string;
}

export function h2loadArgs(opts: H2loadOptions): string[] {
  const args = ["h2load", "-t1", `-c${opts.connections}`, `-m${opts.streams}`, `-D${opts.seconds}`];
  if (opts.h1 === true) args.push("--h1");
  if (opts.body !== undefined) args.push("-d", opts.body);
  args.push("--log-file", opts.logFile);
  for (const [name, value] of Object.entries(opts.headers)) args.push("-H", `${name}: ${value}`);
  args.push(opts.url);
  return args;
}

export async function runH2load(opts: H2loadOptions): Promise<WrkResult> {
  // h2load can outlive -D (seen with every answer a 400 closing its connection): never hang the bench.
  const proc = Bun.spawn(h2loadArgs(opts), {
    stdout: "pipe",
    stderr: "pipe",
    timeout: (opts.seconds + 30) * 1000,
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`h2load failed: ${err || out}`);
  try {
    return parseH2load(out, await Bun.file(opts.logFile).text());
  } finally {
    await rm(opts.logFile, { force: true });
  }
}

/** h2load's summary and its per-request log (tab-separated: start µs, HTTP status, duration µs). */
export function parseH2load(out: string, log: string): WrkResult {
  const rps = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(out)?.[1]);
  const req =
    /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
      out,
    );
  if (!Number.isFinite(rps) || req === null) throw new Error(`cannot parse h2load output:\n${out}`);
  const [, done = 0, , failed = 0, errored = 0, timeout = 0] = req.slice(1).map(Number);
  const durations: number[] = [];
  for (const line of log.split("\n")) {
    const f = line.split("\t");
    if (f.length >= 3) durations.push(Number(f[2]));
  }
  durations.sort((a, b) => a - b);
  const at = (q: number) =>
    (durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] ?? 0) / 1000;
  return {
    rps,
    requests: done,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    // `failed`: answered other than 2xx/3xx; `errored`: a stream or connection error. Calls still open
    // when the duration ends are stopped, and counted in neither.
    errors: failed + errored + timeout,
  };
}
