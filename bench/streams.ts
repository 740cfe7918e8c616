/**
 * Streams section: a TCP listener and its TCPRoute (the byte pipe of src/proxy/passthrough/) beside a real
 * nginx `stream` proxy to the same backend, and the backend direct (the ceiling), loaded with wrk over
 * keep-alive HTTP/1.1 connections (neither proxy parses it): bytes through established pipes. No row of a
 * new connection per request: wrk with `Connection: close` counts every server close as a read error
 * (measured: 50,187 of 50,189 requests against the backend alone), so its figures would mean nothing.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { classesAndGateway, localService, readyIngress } from "./workload.ts";

export async function streamsSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "streams");
  await mkdir(dir, { recursive: true });
  const out = [
    `TCPRoute vs nginx stream {} (both pipe bytes, HTTP/1.1 inside); wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s)`,
  ];
  const direct: Target = {
    name: "direct",
    url: `http://127.0.0.1:${ctx.backendPort}`,
    proc: undefined,
    stop: async () => {},
  };
  for (const n of settings.workerCounts) {
    const tcpPort = await freePort();
    const httpPort = await freePort();
    const gwDir = join(dir, `gatehouse-${n}`);
    await mkdir(gwDir, { recursive: true });
    await writeFile(join(gwDir, "streams.yaml"), streamManifests(ctx.backendPort, httpPort, tcpPort));
    const nginxPort = await freePort();
    const prefix = join(dir, `nginx-${n}`);
    const nginx = await procs.nginx({
      prefix,
      conf: nginxStreamConf({ port: nginxPort, upstreamPort: ctx.backendPort, workers: n, prefix }),
      port: nginxPort,
      host: "stream.bench",
    });
    // Ready when the Ingress on the HTTP port answers; then the TCP listener of the same apply must too.
    const gateway = await procs.gatehouse({
      dir: gwDir,
      port: httpPort,
      workers: n,
      ready: { probe: "/ready", host: "ready.bench" },
    });
    await procs.ready(gateway.proc as Bun.Subprocess, {
      port: tcpPort,
      probe: "/",
      host: "stream.bench",
      expect: "ok",
    });
    const tcp: Target = { ...gateway, name: "gatehouse-tcp", url: `http://127.0.0.1:${tcpPort}` };
    try {
      const targets = [direct, nginx, tcp];
      const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
      for (let r = 0; r < settings.rounds; r++) {
        // Alternate the order each round so slow drift on the machine does not favour one side.
        const order = r % 2 === 0 ? targets : [...targets].reverse();
        for (const t of order) {
          const run = await measuredRun(t.name, await targetPids(t), {
            url: `${t.url}/`,
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
      await gateway.stop();
    }
  }
  return out.join("\n");
}

/** The classes, a Gateway with one TCP listener and its TCPRoute to the backend; an Ingress to probe. */
function streamManifests(upstreamPort: number, httpPort: number, tcpPort: number): string {
  const [ingressClass, gatewayClass, gateway] = classesAndGateway("bench", "streams", httpPort);
  const docs: unknown[] = [
    ingressClass,
    gatewayClass,
    {
      ...gateway,
      spec: {
        gatewayClassName: "gatehouse",
        listeners: [{ name: "tcp", port: tcpPort, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "TCPRoute",
      metadata: { name: "streams", namespace: "bench" },
      spec: { parentRefs: [{ name: "streams" }], rules: [{ backendRefs: [{ name: "backend", port: 80 }] }] },
    },
    ...localService("bench", "backend", 80, upstreamPort),
    readyIngress("bench", "ready.bench", "backend"),
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

/** Debian builds nginx's stream module as a dynamic one (package libnginx-mod-stream, scripts/setup.sh). */
const streamModule = "/usr/lib/nginx/modules/ngx_stream_module.so";

function nginxStreamConf(opts: {
  port: number;
  upstreamPort: number;
  workers: number;
  prefix: string;
}): string {
  return `${existsSync(streamModule) ? `load_module ${streamModule};\n` : ""}worker_processes ${opts.workers};
pid ${opts.prefix}/nginx.pid;
error_log ${opts.prefix}/error.log warn;
events { worker_connections 4096; }
stream {
  server {
    listen 127.0.0.1:${opts.port} reuseport;
    proxy_pass 127.0.0.1:${opts.upstreamPort};
  }
}
`;
}
