/**
 * Proxy section: Gatehouse beside a real nginx (same 1000 routes, upstream keep-alive) and the backend
 * direct (the ceiling), loaded in turn with wrk in alternating rounds, for each worker count: medians,
 * spread, p50/p99, and the ratio to nginx.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { BROWSER_FIELDS, manifests, nginxConf, routeSet, wrkScript } from "./routes.ts";
import { median, spread } from "./stats.ts";

export async function proxySection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const set = routeSet(100, 10);
  const dir = join(ctx.work, "proxy");
  await mkdir(dir, { recursive: true });
  const script = join(dir, "routes.lua");
  const fields = settings.fields === "browser" ? BROWSER_FIELDS : {};
  await writeFile(script, wrkScript(set, fields));
  const directScript = join(dir, "direct.lua");
  await writeFile(directScript, wrkScript({ hosts: [set.hosts[0] as string], paths: ["/p0"] }, fields));
  const out = [
    `1000 routes (100 hosts × 10 prefixes, Ingress and HTTPRoute mixed); wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s); requests: ${settings.fields === "browser" ? "Host and a browser's 14 fields" : "Host only"}`,
  ];
  const direct: Target = {
    name: "direct",
    url: `http://127.0.0.1:${ctx.backendPort}`,
    proc: undefined,
    stop: async () => {},
  };
  for (const n of settings.workerCounts) {
    const port = await freePort();
    const gwDir = join(dir, `gatehouse-${n}`);
    await mkdir(gwDir, { recursive: true });
    await writeFile(join(gwDir, "routes.yaml"), manifests(set, ctx.backendPort, port));
    const nginxPort = await freePort();
    const nginx = await procs.nginx({
      prefix: join(dir, `nginx-${n}`),
      conf: nginxConf(set, {
        port: nginxPort,
        upstreamPort: ctx.backendPort,
        workers: n,
        prefix: join(dir, `nginx-${n}`),
      }),
      port: nginxPort,
      host: set.hosts[0] as string,
    });
    const gatehouse = await procs.gatehouse({
      dir: gwDir,
      port,
      workers: n,
      ready: { probe: "/p0/x", host: set.hosts[1] as string },
    });
    const floors: Target[] = [];
    try {
      if (settings.floor) {
        for (const kind of ["pipe", "bare-http"] as const)
          floors.push(await procs.floor(kind, { port: await freePort(), n, host: set.hosts[1] as string }));
      }
      const targets = [direct, nginx, gatehouse, ...floors];
      const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
      for (let r = 0; r < settings.rounds; r++) {
        // Alternate the order each round so slow drift on the machine does not favour one side.
        const order = r % 2 === 0 ? targets : [...targets].reverse();
        for (const t of order) {
          const run = await measuredRun(t.name, await targetPids(t), {
            url: t.url,
            script: t === direct ? directScript : script,
            seconds: settings.seconds,
            connections: settings.connections,
            threads: 1,
          });
          samples.get(t.name)?.push(run);
        }
      }
      out.push("", `N=${n} worker(s)`, wrkTable(samples, "nginx"));
    } finally {
      await nginx.stop();
      await gatehouse.stop();
      for (const f of floors) await f.stop();
    }
  }
  return out.join("\n");
}

/**
 * One line per target: median req/s, spread, median p50/p99, the ratio to `base`'s median and, when
 * measured, the median CPU µs per request of the target's own processes.
 */
export function wrkTable(samples: ReadonlyMap<string, readonly Run[]>, base: string): string {
  const baseRps = median((samples.get(base) ?? []).map((s) => s.rps));
  const withCpu = [...samples.values()].some((runs) => runs.some((r) => r.cpuUsPerRequest !== undefined));
  const lines = [
    `target        req/s (median)   spread          p50 ms   p99 ms   × ${base}${withCpu ? "   CPU µs/req" : ""}`,
  ];
  for (const [name, runs] of samples) {
    const rps = runs.map((s) => s.rps);
    const m = median(rps);
    const cpu = runs.flatMap((r) => (r.cpuUsPerRequest === undefined ? [] : [r.cpuUsPerRequest]));
    const cpuText = !withCpu ? "" : cpu.length === 0 ? "             –" : median(cpu).toFixed(1).padStart(14);
    lines.push(
      `${name.padEnd(13)} ${m.toFixed(0).padStart(14)}   ${spread(rps).padEnd(14)} ${median(
        runs.map((s) => s.p50Ms),
      )
        .toFixed(2)
        .padStart(7)}  ${median(runs.map((s) => s.p99Ms))
        .toFixed(2)
        .padStart(7)}   ${(m / baseRps).toFixed(2).padStart(base.length + 2)}${cpuText}`,
    );
  }
  return lines.join("\n");
}
