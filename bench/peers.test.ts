import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchContext } from "./context.ts";
import { ingressNginxConf, locationConf, writeIngressNginx } from "./ingress-nginx.ts";
import { ingressNginxLua } from "./ingress-nginx-lua.ts";
import { caddyConfig, goCipherSuites, haproxyConf, haproxyMap } from "./peer-configs.ts";
import { type PeerSetup, peerStarters } from "./peers.ts";
import { Processes } from "./procs.ts";
import { routeSet } from "./routes.ts";
import { BENCH_TLS12_CIPHERS, type BenchCertificate, makeCertificate } from "./tls.ts";

const set = routeSet(4, 2);
let dir: string;
let cert: BenchCertificate;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gatehouse-peers-test-"));
  cert = await makeCertificate(dir, ["*.bench.test", "127.0.0.1"]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function check(cmd: string[], env: Record<string, string> = {}): string {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const out = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${out}`);
  return out;
}

test("haproxyMap: one Host+prefix line per route, all to the one backend", () => {
  const lines = haproxyMap(set).trimEnd().split("\n");
  expect(lines).toHaveLength(8);
  expect(lines[0]).toBe("host-0.bench.test/p0 app");
  expect(lines).toContain("host-3.bench.test/p1 app");
});

test("haproxyConf: threads, reuse, no log; over TLS the bench's suites; haproxy -c accepts both", async () => {
  const mapFile = join(dir, "routes.map");
  await writeFile(mapFile, haproxyMap(set));
  const plain = haproxyConf({ port: 1, upstreamPort: 2, workers: 2, mapFile });
  expect(plain).toContain("  nbthread 2\n");
  expect(plain).toContain("  http-reuse always\n");
  expect(plain).toContain(`use_backend %[base,map_beg(${mapFile})]`);
  expect(plain).not.toMatch(/^\s*log\b/m);
  expect(plain).not.toContain("ssl");
  const pemFile = join(dir, "bench.pem");
  await writeFile(pemFile, cert.certPem + cert.keyPem);
  const tls = haproxyConf({ port: 1, upstreamPort: 2, workers: 1, mapFile, tls: { pemFile } });
  expect(tls).toContain(`  ssl-default-bind-ciphers ${BENCH_TLS12_CIPHERS}\n`);
  expect(tls).toContain(`bind 127.0.0.1:1 ssl crt ${pemFile} alpn http/1.1`);
  for (const [name, text] of [
    ["plain.cfg", plain],
    ["tls.cfg", tls],
  ] as const) {
    await writeFile(join(dir, name), text);
    expect(check(["haproxy", "-c", "-f", join(dir, name)])).toContain("Configuration file is valid");
  }
});

test("goCipherSuites: every bench suite in Go's name, an unknown one refused", () => {
  expect(goCipherSuites()).toHaveLength(BENCH_TLS12_CIPHERS.split(":").length);
  expect(goCipherSuites()).toContain("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
  expect(() => goCipherSuites("ECDHE-ECDSA-AES128-SHA")).toThrow(/no Go name/);
});

test("caddyConfig: a route per host, Prefix matchers, keep-alive pool; caddy validate accepts it", async () => {
  const config = caddyConfig(set, { port: 1, upstreamPort: 2, workers: 1, tls: cert }) as {
    apps: { http: { servers: { bench: { routes: unknown[]; tls_connection_policies: unknown[] } } } };
  };
  const server = config.apps.http.servers.bench;
  expect(server.routes).toHaveLength(5);
  const text = JSON.stringify(config);
  expect(text).toContain('"path":["/p1","/p1/*"]');
  expect(text).toContain('"max_idle_conns_per_host":128');
  expect(server.tls_connection_policies).toHaveLength(1);
  const file = join(dir, "caddy.json");
  await writeFile(file, text);
  expect(check(["caddy", "validate", "--config", file], { HOME: dir, XDG_DATA_HOME: dir })).toContain(
    "Valid configuration",
  );
});

test("ingress-nginx shape: two locations per Prefix path, Lua in four phases; nginx -t runs its Lua", async () => {
  const prefix = join(dir, "nginx-lua");
  const opts = { port: 1, upstreamPort: 2, workers: 1, prefix, tls: cert };
  const conf = ingressNginxConf(set, opts);
  expect(conf.match(/location \/p\d\/ \{/g)).toHaveLength(8);
  expect(conf.match(/location = \/p\d \{/g)).toHaveLength(8);
  expect(conf).toContain('balancer_by_lua_block { require("balancer").balance() }');
  expect(conf).toContain("keepalive 320;");
  expect(conf.match(/ssl_certificate_by_lua_block/g)).toHaveLength(5);
  const location = locationConf();
  for (const phase of ["rewrite_by_lua_block", "header_filter_by_lua_block", "log_by_lua_block"])
    expect(location).toContain(phase);
  expect(location).toContain("proxy_pass http://upstream_balancer;");
  const lua = ingressNginxLua(set, opts);
  expect(lua["bench_config.lua"]).toContain('["host-0.bench.test"] = "bench-tls"');
  // Written and tested for real: nginx -t loads the modules and runs init_by_lua (the Lua compiles).
  const text = await writeIngressNginx(set, { ...opts, port: 18 });
  await writeFile(join(prefix, "nginx.conf"), text);
  expect(check(["nginx", "-t", "-p", prefix, "-c", join(prefix, "nginx.conf")])).toContain(
    "test is successful",
  );
});

describe("each peer routes, answers 404 elsewhere and reuses upstream connections", () => {
  const procs = new Processes();
  let backend: ReturnType<typeof Bun.serve>;
  const upstreamPorts = new Set<number>();
  beforeAll(() => {
    backend = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req, srv) {
        upstreamPorts.add(srv.requestIP(req)?.port ?? 0);
        return new Response("ok\n");
      },
    });
  });
  afterAll(async () => {
    await procs.stopAll();
    await backend.stop(true);
  });
  for (const protocol of ["http", "https"] as const) {
    for (const [name, start] of Object.entries(peerStarters)) {
      test(`${name} over ${protocol}`, async () => {
        const ctx = {
          procs,
          work: dir,
          backendPort: backend.port,
          settings: { smoke: true },
        } as unknown as BenchContext;
        const setup: PeerSetup = {
          ctx,
          set,
          gatewaySet: set,
          cert: protocol === "https" ? cert : undefined,
          n: 1,
          dir: join(dir, `${protocol}-${name}`),
        };
        await mkdir(setup.dir, { recursive: true });
        const t = await start(setup);
        try {
          const init = (host: string) => ({ headers: { host }, tls: { rejectUnauthorized: false } });
          upstreamPorts.clear();
          for (let i = 0; i < 40; i++) {
            const res = await fetch(`${t.url}/p${i % 2}/x`, init(`host-${i % 4}.bench.test`));
            expect(`${res.status} ${await res.text()}`).toBe("200 ok\n");
          }
          // Sequential requests over one client connection: with upstream keep-alive a few connections serve
          // them all (Go's pool sometimes dials before the last one is back); without, one each.
          expect(upstreamPorts.size).toBeLessThanOrEqual(10);
          const missing = await fetch(`${t.url}/p0/x`, init("elsewhere.test"));
          await missing.text();
          expect(missing.status).toBe(404);
        } finally {
          await t.stop();
        }
      });
    }
  }
});
