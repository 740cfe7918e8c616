/**
 * Compression section: what response compression (docs/compression.md) costs per request on a ~10 KB
 * JSON answer (Content-Length, compressing to ~1.5 KB at gzip level 1), beside nginx doing the same with
 * `gzip on` (level 1, ingress-nginx's `gzip-level` default). Rows: the gateway without `--compression`
 * (the base) and with `--compression gzip`, on each front; `br` (quality 4) and `zstd` (level 3) on the
 * raw front; nginx without and with gzip. Every request says `Accept-Encoding: gzip, br, zstd`;
 * each compressing row offers one coding. One process per row (one worker), wrk rounds alternating. The
 * JSON comes from a small upstream of its own (the shared one answers 3 bytes).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";
import { nginxPreamble } from "./routes.ts";
import { median } from "./stats.ts";
import { localService, prefixIngress, readyIngress } from "./workload.ts";

const ns = "bench";
const host = "zip.bench";

/** The upstream: `/json` answers the same ~10 KB JSON document, anything else `ok` (readiness probes). */
const upstreamSource = `
const items = Array.from({ length: 90 }, (_, i) => ({
  id: i, sku: "SKU-" + (100000 + i * 37), name: "Item number " + i, price: Math.round(i * 137.5) / 100,
  tags: ["catalog", i % 2 ? "odd" : "even", "bench"], stock: (i * 7919) % 1000, active: i % 3 !== 0,
}));
const json = JSON.stringify({ page: 1, total: items.length, items });
const server = Bun.serve({
  port: Number(process.argv[2]), hostname: "127.0.0.1",
  fetch: (req) => new URL(req.url).pathname === "/json"
    ? new Response(json, { headers: { "content-type": "application/json" } })
    : new Response("ok\\n", { headers: { "content-type": "text/plain" } }),
});
process.stdout.write(json.length + "\\n");
`;

function manifests(upstreamPort: number): string {
  const docs = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "gatehouse" },
      spec: { controller: "gatehouse.dev/ingress-controller" },
    },
    ...localService(ns, "json", 80, upstreamPort),
    readyIngress(ns, host, "json"),
    prefixIngress(ns, "json", host, "/", "json"),
  ];
  return docs.map((d) => stringify(d)).join("---\n");
}

function nginxConf(port: number, upstreamPort: number, prefix: string, gzip: boolean): string {
  return `${nginxPreamble(1, prefix)}  proxy_http_version 1.1;
  proxy_set_header Connection "";
  ${gzip ? "gzip on; gzip_comp_level 1; gzip_min_length 256; gzip_types application/json; gzip_vary on; gzip_proxied any;" : ""}
  upstream backend { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    server_name ${host};
    location / { proxy_pass http://backend; }
  }
}
`;
}

export async function compressionSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "compression");
  await mkdir(dir, { recursive: true });
  const upstreamFile = join(dir, "json-upstream.ts");
  await writeFile(upstreamFile, upstreamSource);
  const upstreamPort = await freePort();
  const upstream = await procs.start(["bun", upstreamFile, String(upstreamPort)], {
    port: upstreamPort,
    expect: "ok",
  });
  await writeFile(join(dir, "json.yaml"), manifests(upstreamPort));
  const rows: [string, string[]][] = [
    ["off", []],
    ["gzip", ["--compression", "gzip"]],
    ["off bun", ["--front", "bun"]],
    ["gzip bun", ["--compression", "gzip", "--front", "bun"]],
    ["br", ["--compression", "br"]],
    ["zstd", ["--compression", "zstd"]],
  ];
  const targets: Target[] = [];
  const out = [
    `one route to a ~10 KB JSON answer (Content-Length), Accept-Encoding: gzip, br, zstd; one process per row (--workers 1, raw front unless "bun"), nginx 1 worker; wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s)`,
  ];
  try {
    for (const [name, extra] of rows) {
      const port = await freePort();
      targets.push(
        await procs.gatehouse({ dir, port, workers: 1, name, ready: { probe: "/ready", host }, extra }),
      );
    }
    for (const gzip of [false, true]) {
      const port = await freePort();
      const prefix = join(dir, gzip ? "nginx-gzip" : "nginx");
      const nginx = await procs.nginx({
        prefix,
        conf: nginxConf(port, upstreamPort, prefix, gzip),
        port,
        host,
      });
      targets.push({ ...nginx, name: gzip ? "nginx gzip" : "nginx" });
    }
    const sizes = await Promise.all(
      targets.map(async (t) => {
        const res = await fetch(`${t.url}/json`, {
          headers: { host, "accept-encoding": "gzip, br, zstd" },
          decompress: false,
        } as RequestInit);
        return `${t.name} ${res.headers.get("content-encoding") ?? "identity"} ${(await res.arrayBuffer()).byteLength} B`;
      }),
    );
    out.push(`bodies sent: ${sizes.join("; ")}`);
    const samples = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
    for (let r = 0; r < settings.rounds; r++) {
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) {
        const run = await measuredRun(`compression: ${t.name}`, await targetPids(t), {
          url: `${t.url}/json`,
          headers: { Host: host, "Accept-Encoding": "gzip, br, zstd" },
          seconds: settings.seconds,
          connections: settings.connections,
          threads: 1,
        });
        samples.get(t.name)?.push(run);
      }
    }
    out.push(wrkTable(samples, "off"));
    const cpu = (name: string) =>
      median(
        (samples.get(name) ?? []).flatMap((s) =>
          s.cpuUsPerRequest === undefined ? [] : [s.cpuUsPerRequest],
        ),
      );
    const over = (name: string, base: string) => (cpu(name) - cpu(base)).toFixed(1);
    out.push(
      `CPU µs/req added: gzip ${over("gzip", "off")}, br ${over("br", "off")}, zstd ${over("zstd", "off")} (raw front); gzip ${over("gzip bun", "off bun")} (bun front); nginx gzip ${over("nginx gzip", "nginx")}`,
    );
  } finally {
    for (const t of targets) await t.stop();
    await procs.stop(upstream);
  }
  return out.join("\n");
}
