/**
 * The processes a bench run starts (backend, nginx, gateways, redis), each tracked so that the run
 * stops all of them, pass or fail.
 */
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import { type RedisServer, startRedis } from "../test/helpers/redis.ts";
import { runWrk, type WrkOptions, type WrkResult } from "./wrk.ts";

export const repo = resolve(import.meta.dir, "..");

export interface Target {
  readonly name: string;
  readonly url: string;
  readonly proc: Bun.Subprocess | undefined;
  /** Every process serving this target (CPU per request is summed over them); default: `proc` and its descendants. */
  readonly pids?: () => Promise<number[]>;
  stop(): Promise<void>;
}

/** The processes serving `t` now (none for a target we did not start). */
export async function targetPids(t: Target): Promise<number[]> {
  if (t.pids !== undefined) return t.pids();
  if (t.proc === undefined) return [];
  return [t.proc.pid, ...(await descendants(t.proc.pid))];
}

/** A wrk run and, when the target's processes are known, the CPU they spent on it per request. */
export interface Run extends WrkResult {
  readonly cpuUsPerRequest?: number | undefined;
}

/**
 * One wrk run (or another load with wrk's summary, `load`), with the CPU time (user + system) `pids`
 * used for it divided by the requests served: what each request costs the target whichever resource
 * bounds the req/s (none: `pids` is empty). Any failed response or socket error fails the run, naming
 * `label`.
 */
export async function measuredRun(
  label: string,
  pids: readonly number[],
  load: WrkOptions | (() => Promise<WrkResult>),
): Promise<Run> {
  const before = await cpuMs(pids);
  const res = typeof load === "function" ? await load() : await runWrk(load);
  if (res.errors > 0) throw new Error(`${label}: ${res.errors} failed responses in a bench run`);
  if (pids.length === 0) return res;
  return { ...res, cpuUsPerRequest: (((await cpuMs(pids)) - before) * 1000) / res.requests };
}

/** CPU time (user + system, ms) used so far by `pids`, from /proc/PID/stat (gone processes count 0). */
export async function cpuMs(pids: readonly number[]): Promise<number> {
  let ticks = 0;
  for (const p of pids) {
    const stat = await Bun.file(`/proc/${p}/stat`)
      .text()
      .catch(() => "");
    // Fields after the command (which may hold spaces) start after the last ')': utime and stime are
    // fields 14 and 15 of the line, i.e. 12 and 13 of that rest.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(rest[11] ?? 0) + Number(rest[12] ?? 0);
  }
  // Linux reports these in USER_HZ, 100 a second on every architecture Bun runs on.
  return ticks * 10;
}

/** A started process serves once `GET probe` on `port` (with `host`) answers a body starting `expect`. */
export interface ReadyProbe {
  readonly port: number;
  readonly probe?: string | undefined;
  readonly expect: string;
  readonly host?: string | undefined;
  /** Probe over HTTPS, taking any certificate (the bench's own are self-signed). */
  readonly tls?: boolean | undefined;
}

/** Everything started by one bench run; `stopAll()` in a `finally`. */
export class Processes {
  private readonly children = new Set<Bun.Subprocess>();
  private readonly redises = new Set<RedisServer>();

  /**
   * Spawn `cmd` and wait until `GET probe` (with `host`, when given) answers a body starting with
   * `expect`; throws when the process exits or stays silent for 30 s.
   */
  async start(
    cmd: string[],
    ready: ReadyProbe,
    stdout: "ignore" | "pipe" = "ignore",
    env: Record<string, string | undefined> = process.env,
    /** A file to write the process's stderr to, instead of the bench's own. */
    stderrFile?: string,
  ): Promise<Bun.Subprocess> {
    const stderr = stderrFile === undefined ? "inherit" : Bun.file(stderrFile);
    const proc = Bun.spawn(cmd, { stdout, stderr, stdin: "ignore", env });
    this.children.add(proc);
    await this.ready(proc, ready, cmd);
    return proc;
  }

  /** Wait until `proc` answers `ready` (see `start`); throws when it exits or stays silent for 30 s. */
  async ready(proc: Bun.Subprocess, ready: ReadyProbe, cmd: readonly string[] = []): Promise<void> {
    const deadline = Date.now() + 30_000;
    const url = `${ready.tls ? "https" : "http"}://127.0.0.1:${ready.port}${ready.probe ?? "/p0/x"}`;
    const init: RequestInit = {
      ...(ready.host ? { headers: { host: ready.host } } : {}),
      ...(ready.tls ? { tls: { rejectUnauthorized: false } } : {}),
    };
    while (Date.now() < deadline) {
      if (proc.exitCode !== null)
        throw new Error(`${cmd.slice(0, 3).join(" ")} exited with ${proc.exitCode}`);
      try {
        const res = await fetch(url, init);
        if ((await res.text()).startsWith(ready.expect)) return;
      } catch {
        // not listening yet
      }
      await Bun.sleep(50);
    }
    throw new Error(`${cmd.join(" ")} did not become ready on port ${ready.port}`);
  }

  /** Spawn `cmd` with no readiness probe (the caller checks it: an h2c-only server, say); stopped with the rest. */
  spawn(cmd: string[]): Bun.Subprocess {
    const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "inherit", stdin: "ignore" });
    this.children.add(proc);
    return proc;
  }

  async stop(proc: Bun.Subprocess): Promise<void> {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    await proc.exited;
    this.children.delete(proc);
  }

  async redis(): Promise<RedisServer> {
    const r = await startRedis();
    this.redises.add(r);
    return r;
  }

  async stopAll(): Promise<void> {
    for (const c of this.children) if (c.exitCode === null) c.kill("SIGKILL");
    await Promise.all([...this.children].map((c) => c.exited));
    this.children.clear();
    await Promise.all([...this.redises].map((r) => r.close()));
    this.redises.clear();
  }

  /** The port of the backend `backend()` started (floor rows relay to it). */
  private backendPort = 0;

  /** The small Bun upstream (bench/backend.ts) on a free port. */
  async backend(): Promise<number> {
    const port = await freePort();
    await this.start(["bun", join(repo, "bench/backend.ts"), String(port)], { port, expect: "ok" });
    this.backendPort = port;
    return port;
  }

  /**
   * `gatehouse serve` on a folder, as users start it. Access log off (nginx runs with none), metrics on.
   * BENCH_GATEHOUSE_ARGS adds flags (e.g. to compare data planes). With `httpsPort`, the Ingress HTTPS
   * listener is there too, and the target is it: ready once `ready.probe` answers over TLS as well.
   */
  async gatehouse(opts: {
    dir: string;
    port: number;
    httpsPort?: number;
    workers: number;
    /** `httpsHost`: the host probed on the HTTPS port (default `host`). */
    ready: { probe: string; host: string; expect?: string; httpsHost?: string };
    extra?: readonly string[];
    /** The source tree to run (bench/ab.ts runs a second checkout); default: this one. */
    root?: string;
    /** What runs `gatehouse` instead of `bun <root>/src/main.ts` (a compiled executable). */
    command?: readonly string[];
    name?: string;
    /** More environment (bench/ab.ts --alloc: the collector's log) and where stderr goes. */
    env?: Readonly<Record<string, string>>;
    stderrFile?: string;
  }): Promise<Target> {
    const extra = (process.env.BENCH_GATEHOUSE_ARGS ?? "").split(/\s+/).filter(Boolean);
    const proc = await this.start(
      [
        ...(opts.command ?? ["bun", join(opts.root ?? repo, "src/main.ts")]),
        "serve",
        "--dir",
        opts.dir,
        "--bind",
        "127.0.0.1",
        "--http-port",
        String(opts.port),
        "--admin-port",
        "0",
        "--workers",
        String(opts.workers),
        "--log-level",
        "error",
        "--access-log-sample",
        "0",
        // Nothing to drain for at the end of a bench: stop at once instead of serving 5 s more.
        "--drain-delay-ms",
        "0",
        ...(opts.httpsPort === undefined ? [] : ["--https-port", String(opts.httpsPort)]),
        ...(opts.extra ?? []),
        ...extra,
      ],
      { port: opts.port, probe: opts.ready.probe, host: opts.ready.host, expect: opts.ready.expect ?? "ok" },
      "ignore",
      { ...imageEnv(), ...opts.env },
      opts.stderrFile,
    );
    const name = opts.name ?? "gatehouse";
    if (opts.httpsPort !== undefined) {
      // The plain port answering says the configuration is applied; the HTTPS listener opens with it, but
      // wait for its first answer anyway rather than count on the order.
      await this.ready(proc, {
        port: opts.httpsPort,
        probe: opts.ready.probe,
        host: opts.ready.httpsHost ?? opts.ready.host,
        expect: opts.ready.expect ?? "ok",
        tls: true,
      });
      return { name, url: `https://127.0.0.1:${opts.httpsPort}`, proc, stop: () => this.stop(proc) };
    }
    return { name, url: `http://127.0.0.1:${opts.port}`, proc, stop: () => this.stop(proc) };
  }

  /**
   * A floor row (bench/floor/NAME.ts): `n` processes sharing `port` with reusePort, relaying to the
   * backend. Ready when each answers a routed request (reusePort spreads connections over them).
   */
  async floor(name: "pipe" | "bare-http", opts: { port: number; n: number; host: string }): Promise<Target> {
    const started: Bun.Subprocess[] = [];
    for (let i = 0; i < opts.n; i++) {
      started.push(
        await this.start(
          ["bun", join(repo, `bench/floor/${name}.ts`), String(this.backendPort), String(opts.port)],
          { port: opts.port, expect: "ok", host: opts.host },
          "ignore",
          // The same runtime setting as the gateway gets, so the rows stay comparable.
          imageEnv(),
        ),
      );
    }
    return {
      name: `bun-${name}`,
      url: `http://127.0.0.1:${opts.port}`,
      proc: started[0],
      pids: async () => started.map((p) => p.pid),
      stop: async () => {
        for (const p of started) await this.stop(p);
      },
    };
  }

  /** A real nginx (`nginx -p prefix -c conf`) on `port`, the config already rendered (`tls`: over TLS). */
  async nginx(opts: {
    prefix: string;
    conf: string;
    port: number;
    host: string;
    tls?: boolean;
  }): Promise<Target> {
    await Bun.$`mkdir -p ${opts.prefix}`.quiet();
    const confPath = join(opts.prefix, "nginx.conf");
    await writeFile(confPath, opts.conf);
    const tls = opts.tls === true;
    const proc = await this.start(["nginx", "-p", opts.prefix, "-c", confPath, "-g", "daemon off;"], {
      port: opts.port,
      expect: "ok",
      host: opts.host,
      tls,
    });
    const url = `${tls ? "https" : "http"}://127.0.0.1:${opts.port}`;
    return { name: "nginx", url, proc, stop: () => this.stop(proc) };
  }
}

/**
 * The environment the gateway runs with in its image (Dockerfile): the allocator keeps the pages it
 * frees instead of returning them to the kernel and faulting them back (docs/performance.md). A value
 * in the caller's environment wins, to compare.
 */
function imageEnv(): Record<string, string | undefined> {
  return { ...process.env, MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? "-1" };
}

/** Resident memory of a process and its children (kB), from /proc/PID/status `VmRSS`. */
export async function rssKb(pid: number): Promise<number> {
  let total = 0;
  for (const p of [pid, ...(await descendants(pid))]) {
    const status = await Bun.file(`/proc/${p}/status`)
      .text()
      .catch(() => "");
    const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (m) total += Number(m[1]);
  }
  return total;
}

/** Every descendant pid of `pid` (workers of a gateway, nginx workers), from /proc/PID/task/…/children. */
export async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift() as number;
    const text = await Bun.file(`/proc/${p}/task/${p}/children`)
      .text()
      .catch(() => "");
    for (const c of text.split(/\s+/).filter(Boolean).map(Number)) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
