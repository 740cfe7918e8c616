/** Run wrk against one target and read its summary. */
export interface WrkResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  /** Non-2xx/3xx responses plus socket errors: must be 0 for a valid run. */
  readonly errors: number;
  /**
   * The socket errors that were reads (counted in `errors` too): a connection wrk believed open that the
   * server had closed, e.g. after answering `Connection: close` without saying it closes.
   */
  readonly readErrors?: number;
}

export interface WrkOptions {
  readonly url: string;
  readonly script?: string;
  readonly seconds: number;
  readonly connections: number;
  readonly threads: number;
  /** Request headers (`-H`). wrk ignores them for requests a script formats with its own header table. */
  readonly headers?: Readonly<Record<string, string>>;
}

export async function runWrk(opts: WrkOptions): Promise<WrkResult> {
  const proc = Bun.spawn(wrkArgs(opts), { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${err || out}`);
  return parseWrk(out);
}

/** The wrk command line; without a script wrk requests the URL's own path. */
export function wrkArgs(opts: WrkOptions): string[] {
  const args = ["wrk", `-t${opts.threads}`, `-c${opts.connections}`, `-d${opts.seconds}s`, "--latency"];
  for (const [name, value] of Object.entries(opts.headers ?? {})) {
    if (/[\r\n]/.test(name + value) || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
      throw new Error(`wrk: bad header ${JSON.stringify(name)}`);
    args.push("-H", `${name}: ${value}`);
  }
  if (opts.script !== undefined) args.push("-s", opts.script);
  args.push(opts.url);
  return args;
}

/** Parse wrk's text output (with --latency). */
export function parseWrk(out: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const sockErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  if (!Number.isFinite(rps) || !Number.isFinite(requests))
    throw new Error(`cannot parse wrk output:\n${out}`);
  return {
    rps,
    requests,
    p50Ms: latencyMs(out, "50%"),
    p99Ms: latencyMs(out, "99%"),
    errors: non2xx + sockErrors,
    readErrors: sock ? Number(sock[2]) : 0,
  };
}

function latencyMs(out: string, pct: string): number {
  const m = new RegExp(`^\\s+${pct}\\s+([\\d.]+)(us|ms|s)`, "m").exec(out);
  if (!m) return Number.NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}
