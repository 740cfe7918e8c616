/**
 * HTTPS section: Gatehouse terminating TLS beside nginx terminating TLS with the same certificate (a
 * self-signed EC P-256 one, made here with openssl) and the same backend, for each worker count and
 * each front (`--front raw` and `--front bun`), under three loads: keep-alive clients (wrk); a new TLS
 * connection per request with a full handshake, as new visitors (handshakes.ts: its req/s is new TLS
 * connections per second); and wrk with `Connection: close`, whose reconnects resume the previous
 * session (returning visitors; both servers resume, the probe line says so). Medians, spread, p50/p99
 * and the ratio to nginx, as the proxy section.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { runHandshakes } from "./handshakes.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { manifests, nginxConf, type RouteSet, routeSet, wrkScript } from "./routes.ts";
import { type BenchCertificate, makeCertificate, probeHandshakes, tlsSecretYaml } from "./tls.ts";
import { runWrk, type WrkOptions, type WrkResult } from "./wrk.ts";

const fronts = ["raw", "bun"] as const;

interface Workload {
  readonly title: string;
  /** The load of one run against `t` (wrk's options, or a function with wrk's summary). */
  load(t: Target): WrkOptions | (() => Promise<WrkResult>);
}

export async function httpsSection(ctx: BenchContext): Promise<string> {
  const { settings } = ctx;
  // The proxy section's route set; only its Ingress hosts (the even ones) are served on the Ingress HTTPS
  // listener, so requests cycle through those. A smoke run only proves the wiring: a handful of routes.
  const set = settings.smoke ? routeSet(4, 2) : routeSet(100, 10);
  const tlsSet: RouteSet = { hosts: set.hosts.filter((_, i) => i % 2 === 0), paths: set.paths };
  const host = tlsSet.hosts[0] as string;
  const dir = join(ctx.work, "https");
  await mkdir(dir, { recursive: true });
  const cert = await makeCertificate(dir, ["*.bench.test", "127.0.0.1"]);
  const keepAlive = join(dir, "keep-alive.lua");
  await writeFile(keepAlive, wrkScript(tlsSet));
  const close = join(dir, "close.lua");
  await writeFile(close, wrkScript(tlsSet, { Connection: "close" }));
  const wrk = (t: Target, script: string): WrkOptions => ({
    url: t.url,
    script,
    seconds: settings.seconds,
    connections: settings.connections,
    threads: 1,
  });
  /** wrk's read errors per target in the current table (see the resumed load). */
  const readErrors = new Map<string, number>();
  const workloads: Workload[] = [
    { title: "keep-alive clients (wrk)", load: (t) => wrk(t, keepAlive) },
    {
      title:
        "a new TLS connection per request, full handshake (req/s = new connections/s; one route; latency includes the handshake)",
      load: (t) => () =>
        runHandshakes({
          port: Number(new URL(t.url).port),
          host,
          path: `${tlsSet.paths[0]}/x`,
          // wrk cannot run under a second; this load can, which keeps the smoke run short.
          seconds: settings.smoke ? 0.5 : settings.seconds,
          connections: settings.connections,
        }),
    },
    {
      title:
        "a new TLS connection per request, session resumed (wrk, Connection: close; latency after the handshake)",
      // Bun.serve answers `Connection: close` without saying it closes, so wrk writes the next request
      // on the closed connection and counts a read error before reconnecting: one per request on those
      // targets, no answer lost. They are counted apart and printed; other errors still fail the run.
      load: (t) => async () => {
        const r = await runWrk(wrk(t, close));
        const reads = r.readErrors ?? 0;
        readErrors.set(t.name, (readErrors.get(t.name) ?? 0) + reads);
        return { ...r, errors: r.errors - reads };
      },
    },
  ];
  const out = [
    `${tlsSet.hosts.length * tlsSet.paths.length} routes over TLS (${tlsSet.hosts.length} Ingress hosts × ${tlsSet.paths.length} prefixes); one self-signed EC P-256 certificate; ${settings.connections} connections, ${settings.seconds} s a run; ${settings.rounds} round(s)`,
  ];
  for (const n of settings.workerCounts) {
    const targets: Target[] = [];
    try {
      targets.push(await nginxTls(ctx, tlsSet, cert, n, dir));
      // A smoke run proves each load works against both servers; the second front adds only time.
      for (const front of settings.smoke ? fronts.slice(0, 1) : fronts)
        targets.push(await gateway(ctx, set, cert, n, front));
      out.push("", `N=${n} worker(s)`);
      const tries = settings.smoke ? 2 : 8;
      for (const t of targets) {
        const { first, resumed } = await probeHandshakes(dir, Number(new URL(t.url).port), host, tries);
        out.push(
          `  ${t.name}: ${first.negotiated}, ${first.group}, ${first.signature}; sessions resumed: ${resumed} of ${tries} offered`,
        );
      }
      for (const w of workloads) {
        const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
        for (let r = 0; r < settings.rounds; r++) {
          // Alternate the order each round so slow drift on the machine does not favour one side.
          const order = r % 2 === 0 ? targets : [...targets].reverse();
          for (const t of order) {
            const run = await measuredRun(`${t.name} (${w.title})`, await targetPids(t), w.load(t));
            samples.get(t.name)?.push(run);
          }
        }
        out.push("", `N=${n}, ${w.title}`, wrkTable(samples, "nginx"));
        const reads = [...readErrors].filter(([, c]) => c > 0).map(([name, c]) => `${name} ${c}`);
        if (reads.length > 0)
          out.push(
            `wrk read errors (a connection closed without Connection: close, tolerated): ${reads.join(", ")}`,
          );
        readErrors.clear();
      }
    } finally {
      for (const t of targets) await t.stop();
    }
  }
  return out.join("\n");
}

/** nginx with `n` workers terminating TLS for `set` with `cert` (its prefix under `dir`); `http2`: ALPN h2 too. */
export async function nginxTls(
  ctx: BenchContext,
  set: RouteSet,
  cert: BenchCertificate,
  n: number,
  dir: string,
  http2 = false,
): Promise<Target> {
  const port = await freePort();
  const prefix = join(dir, `nginx-${n}`);
  const conf = nginxConf(set, { port, upstreamPort: ctx.backendPort, workers: n, prefix, tls: cert, http2 });
  return ctx.procs.nginx({ prefix, conf, port, host: set.hosts[0] as string, tls: true });
}

/**
 * One gateway on `front` with N workers: the route set with `spec.tls` on every Ingress, the Secret, and
 * the same Secret as the default certificate, because wrk connects by address and its SNI (`127.0.0.1`)
 * names no Ingress host: without it Gatehouse would answer with its generated certificate, not the one
 * nginx serves. Its folder is made under `dir` (the peers section has its own).
 */
export async function gateway(
  ctx: BenchContext,
  set: RouteSet,
  cert: BenchCertificate,
  n: number,
  front: (typeof fronts)[number],
  dir: string = join(ctx.work, "https"),
  extra: readonly string[] = [],
): Promise<Target> {
  const port = await freePort();
  const httpsPort = await freePort();
  const gwDir = join(dir, `gatehouse-${front}-${n}`);
  await mkdir(gwDir, { recursive: true });
  await writeFile(
    join(gwDir, "routes.yaml"),
    `${manifests(set, ctx.backendPort, port, "bench-tls")}---\n${tlsSecretYaml("bench", "bench-tls", cert)}`,
  );
  return ctx.procs.gatehouse({
    dir: gwDir,
    port,
    httpsPort,
    workers: n,
    // Odd hosts are HTTPRoutes on the plain listener (no ssl-redirect); even ones are the TLS Ingresses.
    ready: { probe: "/p0/x", host: set.hosts[1] as string, httpsHost: set.hosts[0] as string },
    extra: ["--front", front, "--default-certificate", "bench/bench-tls", ...extra],
    name: `gatehouse ${front}`,
  });
}
