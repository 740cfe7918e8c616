/**
 * Upstream TLS section: the cost of speaking TLS to a backend. The same small Bun backend serves both in
 * cleartext and in TLS (a certificate for `backend.bench`); Gatehouse reaches the TLS one through a
 * BackendTLSPolicy (CA from a ConfigMap, hostname `backend.bench`: verified, keep-alive pooled) and nginx
 * through `proxy_pass https://` with `proxy_ssl_verify on`, the same CA and name, SNI, session reuse and an
 * upstream keep-alive pool. Both also serve the cleartext backend, so each proxy's TLS cost shows beside
 * its own cleartext row. wrk over keep-alive connections to each proxy's plain HTTP port.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, repo, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { type BenchCertificate, makeCertificate } from "./tls.ts";
import { classesAndGateway, localService } from "./workload.ts";

const NAME = "backend.bench";

export async function upstreamTlsSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "upstream-tls");
  await mkdir(dir, { recursive: true });
  const cert = await makeCertificate(dir, [NAME]);
  const tlsPort = await freePort();
  procs.spawn(["bun", join(repo, "bench/backend.ts"), String(tlsPort), cert.certFile, cert.keyFile]);
  await tlsBackendReady(tlsPort, cert);
  const out = [
    `HTTP/1.1 to a backend in TLS (verified, pooled) and in cleartext; wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s)`,
  ];
  for (const n of settings.workerCounts) {
    const httpPort = await freePort();
    const gwDir = join(dir, `gatehouse-${n}`);
    await mkdir(gwDir, { recursive: true });
    await writeFile(join(gwDir, "upstreams.yaml"), manifests(ctx.backendPort, tlsPort, httpPort, cert));
    const nginxPort = await freePort();
    const prefix = join(dir, `nginx-${n}`);
    const nginx = await procs.nginx({
      prefix,
      conf: nginxConf({ port: nginxPort, plainPort: ctx.backendPort, tlsPort, workers: n, prefix, cert }),
      port: nginxPort,
      host: "plain.bench",
    });
    const gateway = await procs.gatehouse({
      dir: gwDir,
      port: httpPort,
      workers: n,
      ready: { probe: "/", host: "tls.bench" },
    });
    try {
      const targets: [string, Target, string][] = [
        ["nginx plain", nginx, "plain.bench"],
        ["nginx TLS", nginx, "tls.bench"],
        ["gatehouse plain", gateway, "plain.bench"],
        ["gatehouse TLS", gateway, "tls.bench"],
      ];
      const samples = new Map<string, Run[]>(targets.map(([name]) => [name, []]));
      for (let r = 0; r < settings.rounds; r++) {
        // Alternate the order each round so slow drift on the machine does not favour one side.
        const order = r % 2 === 0 ? targets : [...targets].reverse();
        for (const [name, t, host] of order) {
          const run = await measuredRun(name, await targetPids(t), {
            url: `${t.url}/`,
            // "Host", as wrk names its own (a lower-case one would be a second Host field).
            headers: { Host: host },
            seconds: settings.seconds,
            connections: settings.connections,
            threads: 1,
          });
          samples.get(name)?.push(run);
        }
      }
      out.push("", `N=${n} worker(s)`, wrkTable(samples, "nginx TLS"));
    } finally {
      await nginx.stop();
      await gateway.stop();
    }
  }
  return out.join("\n");
}

/** The TLS backend answers over a verified connection (its certificate is its own CA). */
async function tlsBackendReady(port: number, cert: BenchCertificate): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`https://127.0.0.1:${port}/`, { tls: { ca: cert.certPem, serverName: NAME } });
      if ((await res.text()).startsWith("ok")) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(50);
  }
  throw new Error(`the TLS backend on port ${port} did not answer`);
}

function manifests(plainPort: number, tlsPort: number, httpPort: number, cert: BenchCertificate): string {
  const ns = "bench";
  const [ingressClass, gatewayClass, gateway] = classesAndGateway(ns, "upstreams", httpPort);
  const route = (name: string, host: string, service: string, port: number) => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name, namespace: ns },
    spec: {
      parentRefs: [{ name: "upstreams" }],
      hostnames: [host],
      rules: [{ backendRefs: [{ name: service, port }] }],
    },
  });
  const docs: unknown[] = [
    ingressClass,
    gatewayClass,
    gateway,
    ...localService(ns, "plain", 80, plainPort),
    ...localService(ns, "secure", 443, tlsPort),
    route("plain", "plain.bench", "plain", 80),
    route("tls", "tls.bench", "secure", 443),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "backend-ca", namespace: ns },
      data: { "ca.crt": cert.certPem },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "BackendTLSPolicy",
      metadata: { name: "secure", namespace: ns },
      spec: {
        targetRefs: [{ group: "", kind: "Service", name: "secure" }],
        validation: {
          caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "backend-ca" }],
          hostname: NAME,
        },
      },
    },
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

function nginxConf(opts: {
  port: number;
  plainPort: number;
  tlsPort: number;
  workers: number;
  prefix: string;
  cert: BenchCertificate;
}): string {
  return `worker_processes ${opts.workers};
pid ${opts.prefix}/nginx.pid;
error_log ${opts.prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream plain { server 127.0.0.1:${opts.plainPort}; keepalive 64; }
  upstream secure { server 127.0.0.1:${opts.tlsPort}; keepalive 64; }
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  server {
    listen 127.0.0.1:${opts.port} reuseport;
    server_name plain.bench;
    location / { proxy_pass http://plain; }
  }
  server {
    listen 127.0.0.1:${opts.port};
    server_name tls.bench;
    location / {
      proxy_pass https://secure;
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate ${opts.cert.certFile};
      proxy_ssl_name ${NAME};
      proxy_ssl_server_name on;
      proxy_ssl_session_reuse on;
    }
  }
}
`;
}
