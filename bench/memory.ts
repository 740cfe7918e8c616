/**
 * Memory section: resident memory (VmRSS, /proc/PID/status, the process and its children) of a gateway
 * serving 10k routes (1000 hosts × 10 prefixes, Ingress and HTTPRoute mixed) with one worker, idle after
 * start and after warm-up traffic over every host; the same with 10 routes (the runtime's own share);
 * beside nginx with the same 10k routes and one worker process (master + worker summed). Then idle
 * keep-alive connections (bench/idle-connections.ts): 10k (smoke: 200) connections that each had one
 * answer, held open, to a fresh 10k-route gateway and a fresh nginx with the same routes; nginx's
 * worker_connections is raised above the count for that (its 4096 would refuse the rest), and the
 * gateway's --max-connections default (16384) already is.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { type IdleConnections, measureIdleConnections } from "./idle-connections.ts";
import { rssKb, type Target } from "./procs.ts";
import { manifests, nginxConf, routeSet, wrkScript } from "./routes.ts";
import { runWrk } from "./wrk.ts";

export async function memorySection(ctx: BenchContext): Promise<string> {
  const set = ctx.settings.smoke ? routeSet(20, 10) : routeSet(1000, 10);
  const routes = set.hosts.length * set.paths.length;
  const dir = join(ctx.work, "memory");
  await mkdir(dir, { recursive: true });
  const script = join(dir, "routes.lua");
  await writeFile(script, wrkScript(set));
  const warmSeconds = ctx.settings.smoke ? 1 : 5;
  const out = [
    `${routes} routes; one worker each; warm-up: wrk -t1 -c${ctx.settings.connections} -d${warmSeconds}s over every host × path`,
    "target       RSS idle (MB)   RSS after traffic (MB)",
  ];
  const idleWanted = ctx.settings.smoke ? 200 : 10_000;
  const idleSettle = ctx.settings.smoke ? 100 : 1000;
  const idle: [string, IdleConnections][] = [];
  const idleRow = (name: string, r: IdleConnections) =>
    `${name.padEnd(12)} ${String(r.count).padStart(11)}   ${(r.rssBeforeKb / 1024).toFixed(1).padStart(10)}   ${(r.rssAfterKb / 1024).toFixed(1).padStart(9)}   ${r.bytesEach.toFixed(0).padStart(10)}${r.limitedBy ? `   (${r.limitedBy})` : ""}${r.closedEarly > 0 ? `   (${r.closedEarly} closed by the server early: figure too low)` : ""}`;
  const smallScript = join(dir, "small.lua");
  await writeFile(smallScript, wrkScript(routeSet(1, 10)));
  const measure = async (t: Target, wrkLua = script) => {
    const pid = t.proc?.pid as number;
    const settle = ctx.settings.smoke ? 50 : 500;
    await Bun.sleep(settle);
    const idle = await rssKb(pid);
    const res = await runWrk({
      url: t.url,
      script: wrkLua,
      seconds: warmSeconds,
      connections: ctx.settings.connections,
      threads: 1,
    });
    if (res.errors > 0) throw new Error(`memory: ${t.name}: ${res.errors} failed responses`);
    await Bun.sleep(settle);
    const warm = await rssKb(pid);
    out.push(
      `${t.name.padEnd(12)} ${(idle / 1024).toFixed(1).padStart(13)}   ${(warm / 1024).toFixed(1).padStart(22)}`,
    );
  };

  // The same process with 10 routes first: what the runtime costs before any route.
  const rows = [
    ["gatehouse-10", routeSet(1, 10)],
    ["gatehouse", set],
  ] as const;
  // A smoke run proves the section works; one gateway is enough for that.
  for (const [label, gwSet] of ctx.settings.smoke ? rows.slice(1) : rows) {
    const port = await freePort();
    const gwDir = join(dir, label);
    await mkdir(gwDir, { recursive: true });
    await writeFile(join(gwDir, "routes.yaml"), manifests(gwSet, ctx.backendPort, port));
    const gw = await ctx.procs.gatehouse({
      dir: gwDir,
      port,
      workers: 1,
      ready: { probe: "/p0/x", host: gwSet.hosts[0] as string },
    });
    try {
      await measure({ ...gw, name: label }, gwSet === set ? script : smallScript);
    } finally {
      await gw.stop();
    }
  }

  // Idle connections to a fresh gateway, as to a fresh nginx below: after the warm-up traffic the heap
  // has free room that the connections fill without RSS showing it (~130 B each there, ~1.4 KB here).
  const idlePortGw = await freePort();
  const idleDir = join(dir, "gatehouse-idle");
  await mkdir(idleDir, { recursive: true });
  await writeFile(join(idleDir, "routes.yaml"), manifests(set, ctx.backendPort, idlePortGw));
  const fresh = await ctx.procs.gatehouse({
    dir: idleDir,
    port: idlePortGw,
    workers: 1,
    ready: { probe: "/p0/x", host: set.hosts[0] as string },
  });
  const idleOf = async (name: string, target: Target, port: number) => {
    try {
      const measured = await measureIdleConnections({
        pid: target.proc?.pid as number,
        port,
        host: set.hosts[0] as string,
        path: "/p0/x",
        wanted: idleWanted,
        settle: idleSettle,
      });
      idle.push([name, measured]);
    } finally {
      await target.stop();
    }
  };
  await idleOf("gatehouse", fresh, idlePortGw);

  const nginxPort = await freePort();
  const prefix = join(dir, "nginx");
  const nginx = await ctx.procs.nginx({
    prefix,
    conf: nginxConf(set, { port: nginxPort, upstreamPort: ctx.backendPort, workers: 1, prefix }),
    port: nginxPort,
    host: set.hosts[0] as string,
  });
  try {
    await measure(nginx);
  } finally {
    await nginx.stop();
  }

  // The same nginx with room for the idle connections.
  const idlePort = await freePort();
  const idlePrefix = join(dir, "nginx-idle");
  const conf = nginxConf(set, {
    port: idlePort,
    upstreamPort: ctx.backendPort,
    workers: 1,
    prefix: idlePrefix,
  });
  const roomy = conf.replace(/worker_connections \d+;/, `worker_connections ${idleWanted + 1024};`);
  if (roomy === conf) throw new Error("memory: nginx.conf has no worker_connections to raise");
  const nginxIdle = await ctx.procs.nginx({
    prefix: idlePrefix,
    conf: roomy,
    port: idlePort,
    host: set.hosts[0] as string,
  });
  await idleOf("nginx", nginxIdle, idlePort);
  out.push(
    "",
    `idle keep-alive connections (HTTP/1.1, one answered request each, then idle; ${routes} routes; a fresh process each; nginx worker_connections ${idleWanted + 1024})`,
    "target       connections   RSS before   RSS after   bytes each   (RSS in MB)",
    ...idle.map(([name, r]) => idleRow(name, r)),
  );
  return out.join("\n");
}
