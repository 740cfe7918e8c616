/**
 * `bun run bench`: Gatehouse side by side with a real nginx (same routes, upstream keep-alive) and the
 * backend direct (the ceiling), loaded in turn with wrk in alternating rounds; prints medians, spread and
 * the Gatehouse / nginx ratio, for N=1 and N=auto workers. `--smoke` (or BENCH_SMOKE=1) runs one short
 * round to prove the harness works (CI); the figures of a smoke run mean nothing.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import { manifests, nginxConf, routeSet, wrkScript } from "./routes.ts";
import { runWrk, type WrkResult } from "./wrk.ts";

const smoke = process.argv.includes("--smoke") || process.env.BENCH_SMOKE === "1";
const rounds = smoke ? 1 : Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = smoke ? 1 : Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const cores = availableParallelism();
const repo = resolve(import.meta.dir, "..");

interface Target {
  readonly name: string;
  readonly url: string;
  stop(): Promise<void>;
}

const children: Bun.Subprocess[] = [];
const work = await mkdtemp(join(tmpdir(), "gatehouse-bench-"));
try {
  await main();
} finally {
  for (const c of children) c.kill();
  await Promise.all(children.map((c) => c.exited));
  await rm(work, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const set = routeSet(100, 10);
  const upstreamPort = await freePort();
  await start(["bun", join(repo, "bench/backend.ts"), String(upstreamPort)], upstreamPort, "ok");
  await writeFile(join(work, "routes.yaml"), manifests(set, upstreamPort));
  const script = join(work, "routes.lua");
  await writeFile(script, wrkScript(set));
  const directScript = join(work, "direct.lua");
  await writeFile(directScript, 'request = function() return wrk.format("GET", "/p0/x") end\n');

  // BENCH_WORKERS=1 (or "1,2") limits the worker counts measured; default N=1 and N=cores.
  const workerCounts = process.env.BENCH_WORKERS
    ? process.env.BENCH_WORKERS.split(",").map(Number)
    : [...new Set([1, cores])];
  console.log(
    `machine: ${cores} cores; wrk -t1 -c${connections} -d${seconds}s; ${rounds} round(s); 1000 routes`,
  );
  const direct: Target = { name: "direct", url: `http://127.0.0.1:${upstreamPort}`, stop: async () => {} };
  for (const n of workerCounts) {
    const nginx = await startNginx(set, upstreamPort, n);
    const gatehouse = await startGatehouse(n);
    const samples = new Map<string, WrkResult[]>();
    for (let r = 0; r < rounds; r++) {
      // Alternate the order each round so slow drift on the machine does not favour one side.
      const order = r % 2 === 0 ? [direct, nginx, gatehouse] : [gatehouse, nginx, direct];
      for (const t of order) {
        const res = await runWrk({
          url: t.url,
          script: t === direct ? directScript : script,
          seconds,
          connections,
          threads: 1,
        });
        if (res.errors > 0) throw new Error(`${t.name}: ${res.errors} failed responses in a bench run`);
        samples.set(t.name, [...(samples.get(t.name) ?? []), res]);
      }
    }
    printTable(n, samples);
    await nginx.stop();
    await gatehouse.stop();
  }
}

function printTable(n: number, samples: Map<string, WrkResult[]>): void {
  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
  };
  const nginxRps = med((samples.get("nginx") ?? []).map((s) => s.rps));
  console.log(`\nN=${n} worker(s)`);
  console.log("target      req/s (median)   spread          p50 ms   p99 ms   × nginx");
  for (const [name, runs] of samples) {
    const rps = runs.map((s) => s.rps);
    const m = med(rps);
    console.log(
      `${name.padEnd(11)} ${m.toFixed(0).padStart(14)}   ${`${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}`.padEnd(14)} ${med(
        runs.map((s) => s.p50Ms),
      )
        .toFixed(2)
        .padStart(7)}  ${med(runs.map((s) => s.p99Ms))
        .toFixed(2)
        .padStart(7)}   ${(m / nginxRps).toFixed(2)}`,
    );
  }
}

async function startNginx(
  set: ReturnType<typeof routeSet>,
  upstreamPort: number,
  workers: number,
): Promise<Target> {
  const port = await freePort();
  const prefix = join(work, `nginx-${workers}`);
  await Bun.$`mkdir -p ${prefix}`.quiet();
  const conf = join(prefix, "nginx.conf");
  await writeFile(conf, nginxConf(set, { port, upstreamPort, workers, prefix }));
  const proc = await start(
    ["nginx", "-p", prefix, "-c", conf, "-g", "daemon off;"],
    port,
    "ok",
    set.hosts[0],
  );
  return { name: "nginx", url: `http://127.0.0.1:${port}`, stop: () => kill(proc) };
}

async function startGatehouse(workers: number): Promise<Target> {
  const port = await freePort();
  const proc = await start(
    [
      "bun",
      join(repo, "src/main.ts"),
      "serve",
      "--dir",
      work,
      "--bind",
      "127.0.0.1",
      "--http-port",
      String(port),
      "--admin-port",
      "0",
      "--workers",
      String(workers),
      "--log-level",
      "error",
      // nginx runs with access_log off; compare like with like (metrics stay on).
      "--access-log-sample",
      "0",
    ],
    port,
    "ok",
    "host-0.bench.test",
  );
  return { name: "gatehouse", url: `http://127.0.0.1:${port}`, stop: () => kill(proc) };
}

/** Spawn a process and wait until `GET /p0/x` on its port answers `expect`. */
async function start(cmd: string[], port: number, expect: string, host?: string): Promise<Bun.Subprocess> {
  const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "inherit" });
  children.push(proc);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${cmd[0]} exited with ${proc.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/p0/x`, host ? { headers: { host } } : {});
      if ((await res.text()).startsWith(expect)) return proc;
    } catch {
      // not listening yet
    }
    await Bun.sleep(100);
  }
  throw new Error(`${cmd.join(" ")} did not become ready on port ${port}`);
}

async function kill(proc: Bun.Subprocess): Promise<void> {
  proc.kill("SIGTERM");
  await proc.exited;
}
