/**
 * Peers section: Gatehouse beside the proxies its users would otherwise pick, each with the same routes,
 * the same backend and upstream keep-alive, no access log and, over TLS, the same certificate and TLS 1.2
 * suites: plain nginx (the proxy and https sections' configuration), nginx in ingress-nginx's shape (Lua
 * in the rewrite, balancer, header-filter and log phases: ingress-nginx.ts), HAProxy (a host+path map,
 * `nbthread N`) and Caddy (Go, `GOMAXPROCS=N`) (peer-configs.ts). Plain HTTP over the proxy section's
 * 1,000 routes and HTTPS over the https section's 500 TLS routes, keep-alive clients (wrk), N=1 and
 * N=cores, the order alternating each round; each table gives every peer's ratio to Gatehouse.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { gateway } from "./https.ts";
import { luaModuleFiles, writeIngressNginx } from "./ingress-nginx.ts";
import { caddyConfig, haproxyConf, haproxyMap } from "./peer-configs.ts";
import { measuredRun, type Processes, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { manifests, nginxConf, type RouteSet, routeSet, wrkScript } from "./routes.ts";
import { type BenchCertificate, makeCertificate, probeHandshakes } from "./tls.ts";

const protocols = ["http", "https"] as const;
type Protocol = (typeof protocols)[number];

/** What one protocol × N table needs to start its targets. */
export interface PeerSetup {
  readonly ctx: BenchContext;
  /** Routes every peer is configured with (the proxy section's, or the https section's TLS ones). */
  readonly set: RouteSet;
  /** The gateway's routes: the whole set; over TLS only its Ingress hosts are on the HTTPS listener. */
  readonly gatewaySet: RouteSet;
  readonly cert: BenchCertificate | undefined;
  readonly n: number;
  readonly dir: string;
}

export async function peersSection(ctx: BenchContext): Promise<string> {
  requirePeers();
  const { settings } = ctx;
  // The smoke run proves every peer's configuration and load on a handful of routes.
  const set = settings.smoke ? routeSet(4, 2) : routeSet(100, 10);
  const tlsSet: RouteSet = { hosts: set.hosts.filter((_, i) => i % 2 === 0), paths: set.paths };
  const dir = join(ctx.work, "peers");
  await mkdir(dir, { recursive: true });
  const cert = await makeCertificate(dir, ["*.bench.test", "127.0.0.1"]);
  const scripts: Record<Protocol, string> = { http: join(dir, "http.lua"), https: join(dir, "https.lua") };
  await writeFile(scripts.http, wrkScript(set));
  await writeFile(scripts.https, wrkScript(tlsSet));
  const out = [
    `HTTP: ${set.hosts.length * set.paths.length} routes; HTTPS: the ${tlsSet.hosts.length * tlsSet.paths.length} Ingress routes on TLS, one self-signed EC P-256 certificate; keep-alive clients, wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s); Host only`,
    "nginx-lua: nginx in ingress-nginx's shape (Lua in rewrite, balancer, header filter and log phases)",
  ];
  for (const protocol of protocols) {
    for (const n of settings.workerCounts) {
      const setup: PeerSetup = {
        ctx,
        set: protocol === "http" ? set : tlsSet,
        gatewaySet: set,
        cert: protocol === "http" ? undefined : cert,
        n,
        dir: join(dir, `${protocol}-${n}`),
      };
      await mkdir(setup.dir, { recursive: true });
      const targets: Target[] = [];
      try {
        targets.push(await startGatehouse(setup));
        for (const start of Object.values(peerStarters)) targets.push(await start(setup));
        out.push("", `${protocol.toUpperCase()}, N=${n} worker(s)`);
        if (protocol === "https") {
          const tries = settings.smoke ? 1 : 4;
          for (const t of targets) {
            const port = Number(new URL(t.url).port);
            const { first, resumed } = await probeHandshakes(
              setup.dir,
              port,
              tlsSet.hosts[0] as string,
              tries,
            );
            out.push(
              `  ${t.name}: ${first.negotiated}, ${first.group}, ${first.signature}; sessions resumed: ${resumed} of ${tries}`,
            );
          }
        }
        const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
        for (let r = 0; r < settings.rounds; r++) {
          // Alternate the order each round so slow drift on the machine does not favour one side.
          const order = r % 2 === 0 ? targets : [...targets].reverse();
          for (const t of order) {
            const run = await measuredRun(`${t.name} (${protocol}, N=${n})`, await targetPids(t), {
              url: t.url,
              script: scripts[protocol],
              seconds: settings.seconds,
              connections: settings.connections,
              threads: 1,
            });
            samples.get(t.name)?.push(run);
          }
        }
        out.push(wrkTable(samples, "gatehouse"));
      } finally {
        for (const t of targets) await t.stop();
      }
    }
  }
  return out.join("\n");
}

/** Fail at once, naming what to install, rather than measure fewer peers than the table promises. */
function requirePeers(): void {
  const missing = [
    ...(Bun.which("haproxy") === null ? ["haproxy"] : []),
    ...(Bun.which("caddy") === null ? ["caddy"] : []),
    ...(luaModuleFiles.every((f) => existsSync(f)) ? [] : ["libnginx-mod-http-lua"]),
  ];
  if (missing.length > 0)
    throw new Error(`the peers section needs ${missing.join(", ")} (Debian packages; scripts/setup.sh)`);
}

/** How each peer starts, by its row's name (the table's order). */
export const peerStarters: Readonly<Record<string, (s: PeerSetup) => Promise<Target>>> = {
  nginx: startNginx,
  "nginx-lua": startIngressNginx,
  haproxy: startHaproxy,
  caddy: startCaddy,
};

async function startGatehouse(s: PeerSetup): Promise<Target> {
  const probe = { probe: "/p0/x", host: s.gatewaySet.hosts[1] as string };
  if (s.cert !== undefined) {
    const t = await gateway(s.ctx, s.gatewaySet, s.cert, s.n, "raw", s.dir);
    return { ...t, name: "gatehouse" };
  }
  const port = await freePort();
  const gwDir = join(s.dir, "gatehouse");
  await mkdir(gwDir, { recursive: true });
  await writeFile(join(gwDir, "routes.yaml"), manifests(s.gatewaySet, s.ctx.backendPort, port));
  return s.ctx.procs.gatehouse({ dir: gwDir, port, workers: s.n, ready: probe });
}

function nginxOptions(s: PeerSetup, port: number, prefix: string) {
  return {
    port,
    upstreamPort: s.ctx.backendPort,
    workers: s.n,
    prefix,
    ...(s.cert === undefined ? {} : { tls: s.cert }),
  };
}

async function startNginx(s: PeerSetup): Promise<Target> {
  const port = await freePort();
  const prefix = join(s.dir, "nginx");
  return s.ctx.procs.nginx({
    prefix,
    conf: nginxConf(s.set, nginxOptions(s, port, prefix)),
    port,
    host: s.set.hosts[0] as string,
    tls: s.cert !== undefined,
  });
}

async function startIngressNginx(s: PeerSetup): Promise<Target> {
  const port = await freePort();
  const prefix = join(s.dir, "nginx-lua");
  const conf = await writeIngressNginx(s.set, nginxOptions(s, port, prefix));
  const host = s.set.hosts[0] as string;
  try {
    const t = await s.ctx.procs.nginx({ prefix, conf, port, host, tls: s.cert !== undefined });
    return { ...t, name: "nginx-lua" };
  } catch (err) {
    // The Lua's errors are in nginx's error log, not on stderr.
    const log = await readFile(join(prefix, "error.log"), "utf8").catch(() => "");
    throw new Error(`${(err as Error).message}\nnginx-lua's error.log:\n${log.slice(-2000)}`);
  }
}

async function startHaproxy(s: PeerSetup): Promise<Target> {
  const port = await freePort();
  const dir = join(s.dir, "haproxy");
  await mkdir(dir, { recursive: true });
  const mapFile = join(dir, "routes.map");
  await writeFile(mapFile, haproxyMap(s.set));
  let tls: { pemFile: string } | undefined;
  if (s.cert !== undefined) {
    tls = { pemFile: join(dir, "bench.pem") };
    await writeFile(tls.pemFile, s.cert.certPem + s.cert.keyPem);
  }
  const conf = join(dir, "haproxy.cfg");
  await writeFile(
    conf,
    haproxyConf({
      port,
      upstreamPort: s.ctx.backendPort,
      workers: s.n,
      mapFile,
      ...(tls === undefined ? {} : { tls }),
    }),
  );
  // -db: stay in the foreground, one process (its threads are the workers).
  return peerProcess(s, "haproxy", ["haproxy", "-db", "-f", conf], port, dir, {});
}

async function startCaddy(s: PeerSetup): Promise<Target> {
  const port = await freePort();
  const dir = join(s.dir, "caddy");
  await mkdir(dir, { recursive: true });
  const conf = join(dir, "caddy.json");
  const opts = { port, upstreamPort: s.ctx.backendPort, workers: s.n };
  await writeFile(
    conf,
    JSON.stringify(caddyConfig(s.set, s.cert === undefined ? opts : { ...opts, tls: s.cert }), null, 1),
  );
  // Caddy keeps its storage under HOME / XDG folders: the run's own, not the user's.
  const env = { GOMAXPROCS: String(s.n), HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
  return peerProcess(s, "caddy", ["caddy", "run", "--config", conf], port, dir, env);
}

/** Start a peer, its stderr to a file (Caddy writes its start-up to it) shown when it does not come up. */
async function peerProcess(
  s: PeerSetup,
  name: string,
  cmd: string[],
  port: number,
  dir: string,
  env: Record<string, string>,
): Promise<Target> {
  const procs: Processes = s.ctx.procs;
  const stderrFile = join(dir, "stderr.log");
  const tls = s.cert !== undefined;
  let proc: Bun.Subprocess;
  try {
    proc = await procs.start(
      cmd,
      { port, expect: "ok", host: s.set.hosts[0] as string, tls },
      "ignore",
      { ...process.env, ...env },
      stderrFile,
    );
  } catch (err) {
    const log = await readFile(stderrFile, "utf8").catch(() => "");
    throw new Error(`${(err as Error).message}\n${name}'s stderr:\n${log.slice(-2000)}`);
  }
  return {
    name,
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    proc,
    stop: () => procs.stop(proc),
  };
}
