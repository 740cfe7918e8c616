/**
 * `bun run bench`: every section, one report. Sections (each in its own file):
 *   proxy    Gatehouse / nginx / direct, N=1 and N=cores workers (proxy.ts)
 *   https    Gatehouse (both fronts) / nginx terminating TLS: keep-alive, new connections (https.ts)
 *   peers    Gatehouse / nginx / nginx in ingress-nginx's shape / HAProxy / Caddy, HTTP and HTTPS (peers.ts)
 *   guards   JWT, rate-limit, basic-auth (and under a flood) and API-key rows against the same route unguarded (guards.ts)
 *   tracing  OpenTelemetry tracing at sample rates 0, 0.01 and 1 against the same gateway without it (tracing.ts)
 *   compression  gzip, br and zstd of a ~10 KB JSON answer against the same gateway without, and nginx gzip (compression.ts)
 *   balancing  least request, consistent hash, EWMA, sticky sessions, health checks and circuit-breaker caps against round robin (balancing.ts)
 *   waf      ModSecurity + OWASP CRS on a clean and on a blocked request, and the stall beside it (waf.ts)
 *   streams  a TCP listener's byte pipe (TCPRoute) / nginx stream / direct, over keep-alive connections (streams.ts)
 *   grpc     unary gRPC calls through a GRPCRoute (h2c) / nginx grpc_pass / direct, loaded with h2load (grpc.ts)
 *   http2    HTTP/2 against HTTP/1.1 over TLS, Gatehouse --http2 true and nginx http2, loaded with h2load (http2.ts)
 *   upstream-tls  HTTP/1.1 to a backend in TLS (BackendTLSPolicy) and in cleartext / nginx proxy_ssl (upstream-tls.ts)
 *   matcher  route lookup at 10…100k routes (matcher.ts)
 *   apply    a config change at 10k routes, in process and end to end (apply.ts)
 *   memory   RSS at 10k routes, beside nginx (memory.ts)
 *   startup  time to ready at 10k routes: from source and as the compiled executable (startup.ts)
 * `--only a,b` runs some; `--smoke` (or BENCH_SMOKE=1) runs a tiny version of each to prove the harness
 * works (CI) — its figures mean nothing. Method and figures: docs/performance.md.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { applySection } from "./apply.ts";
import { parseBenchArgs, type SectionName } from "./args.ts";
import { balancingSection } from "./balancing.ts";
import { compressionSection } from "./compression.ts";
import type { BenchContext } from "./context.ts";
import { grpcSection } from "./grpc.ts";
import { guardsSection } from "./guards.ts";
import { http2Section } from "./http2.ts";
import { httpsSection } from "./https.ts";
import { matcherSection } from "./matcher.ts";
import { memorySection } from "./memory.ts";
import { peersSection } from "./peers.ts";
import { Processes } from "./procs.ts";
import { proxySection } from "./proxy.ts";
import { startupSection } from "./startup.ts";
import { streamsSection } from "./streams.ts";
import { tracingSection } from "./tracing.ts";
import { upstreamTlsSection } from "./upstream-tls.ts";
import { wafSection } from "./waf.ts";

let args: ReturnType<typeof parseBenchArgs>;
try {
  args = parseBenchArgs(Bun.argv.slice(2), process.env);
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

const sections: Record<SectionName, { title: string; run: (ctx: BenchContext) => Promise<string> | string }> =
  {
    proxy: { title: "proxy", run: proxySection },
    https: { title: "https (TLS termination)", run: httpsSection },
    peers: { title: "peers (nginx, nginx-lua, HAProxy, Caddy)", run: peersSection },
    guards: { title: "guards (JWT, rate limit, basic auth, API keys)", run: guardsSection },
    tracing: { title: "tracing (OpenTelemetry, OTLP/HTTP)", run: tracingSection },
    compression: { title: "compression (gzip, br, zstd)", run: compressionSection },
    balancing: { title: "balancing (algorithms, health checks, circuit breaker)", run: balancingSection },
    waf: { title: "waf (ModSecurity v3 + OWASP CRS)", run: wafSection },
    streams: { title: "streams (TCPRoute byte pipe)", run: streamsSection },
    grpc: { title: "grpc (GRPCRoute unary calls)", run: grpcSection },
    http2: { title: "http2 (HTTP/2 over TLS against HTTP/1.1)", run: http2Section },
    "upstream-tls": { title: "upstream TLS (BackendTLSPolicy)", run: upstreamTlsSection },
    matcher: { title: "matcher", run: matcherSection },
    apply: { title: "config change", run: applySection },
    memory: { title: "memory", run: memorySection },
    startup: { title: "startup (source / executable)", run: startupSection },
  };

const cores = availableParallelism();
const procs = new Processes();
const work = await mkdtemp(join(tmpdir(), "gatehouse-bench-"));
// Stop what we started on Ctrl-C too, not only on a normal end.
const interrupted = () => {
  void procs.stopAll().finally(() => process.exit(130));
};
process.on("SIGINT", interrupted);
process.on("SIGTERM", interrupted);
let failed = false;
try {
  const backendPort = await procs.backend();
  const ctx: BenchContext = {
    settings: {
      smoke: args.smoke,
      rounds: args.rounds,
      seconds: args.seconds,
      connections: args.connections,
      // A smoke run proves the section works with one worker count; CI time is short.
      workerCounts: args.workers.length > 0 ? args.workers : args.smoke ? [1] : [...new Set([1, cores])],
      floor: args.floor,
      fields: args.fields,
      cores,
    },
    procs,
    work,
    backendPort,
  };
  console.log(
    `gatehouse bench ${new Date().toISOString()}${args.smoke ? " (SMOKE: figures mean nothing)" : ""}\nmachine: ${cores} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; Bun ${Bun.version}`,
  );
  for (const name of args.only) {
    const s = sections[name];
    const started = performance.now();
    console.log(`\n== ${s.title} ==`);
    try {
      console.log(await s.run(ctx));
    } catch (err) {
      // One broken section must not hide the others' figures; the run still fails at the end.
      failed = true;
      console.log(`FAILED: ${(err as Error).stack ?? String(err)}`);
    }
    console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
} finally {
  await procs.stopAll();
  await rm(work, { recursive: true, force: true });
}
if (failed) process.exit(1);
