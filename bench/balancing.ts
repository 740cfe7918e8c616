/**
 * Balancing section: what each way of picking an endpoint costs a request end to end, and what health
 * checks and circuit-breaker caps add (docs/load-balancing.md, docs/traffic-policy.md). One gateway
 * (`--workers 1`, raw front), one upstream process serving the same port on 127.0.0.1, .2 and .3 (three
 * endpoints of every Service), one host per row, each on a Service of its own with its policy or
 * annotation: round robin (the base), least request, consistent hash on a header, a cookie and the client
 * address, EWMA, a sticky cookie session (the cookie the gateway issued sent back), active health checks
 * (every 1 s), passive outlier detection, circuit-breaker caps set high enough never to refuse (requests,
 * retries, connections, per endpoint), and `maxRequestsPerConnection: 100` (a new upstream connection
 * every 100 requests); and on a second gateway on `--front bun`, round robin and the same caps (where
 * the full path opens a connection per request: docs/http.md's written exception). Rounds alternate the row order, after an untimed second per row. Before timing,
 * each row's picking is checked where it shows: round robin reaches all three endpoints, the hashes and
 * the session one.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { freePort } from "../test/helpers/ports.ts";
import type { BenchContext } from "./context.ts";
import { measuredRun, type Run, type Target, targetPids } from "./procs.ts";
import { wrkTable } from "./proxy.ts";

const ns = "bench-lb";
const ENDPOINTS = ["127.0.0.1", "127.0.0.2", "127.0.0.3"];
const A = "nginx.ingress.kubernetes.io/";

/** The upstream: every endpoint answers `ok <its address>` (the checks read which one answered). */
const upstreamSource = `
const port = Number(process.argv[2]);
for (const hostname of ${JSON.stringify(ENDPOINTS)})
  Bun.serve({ port, hostname, fetch: () => new Response("ok " + hostname + "\\n", { headers: { "content-type": "text/plain" } }) });
`;

interface Row {
  readonly name: string;
  readonly service: string;
  readonly policy?: Record<string, unknown>;
  readonly annotations?: Record<string, string>;
  readonly headers?: Record<string, string>;
  /** How many endpoints 12 requests must reach before timing (undefined: not checked). */
  readonly spread?: number;
  /** Through a second gateway on `--front bun` (a route of the raw rows: no manifests of its own). */
  readonly front?: "bun";
}

const hash = (consistentHash: Record<string, unknown>) => ({
  loadBalancer: { type: "ConsistentHash", consistentHash },
});

export const balancingRows: readonly Row[] = [
  { name: "round robin", service: "rr", spread: 3 },
  { name: "least request", service: "least", policy: { loadBalancer: { type: "LeastRequest" } } },
  {
    name: "hash header",
    service: "hheader",
    policy: hash({ type: "Header", header: { name: "X-User" } }),
    headers: { "X-User": "user-4242" },
    spread: 1,
  },
  {
    name: "hash cookie",
    service: "hcookie",
    policy: hash({ type: "Cookie", cookie: { name: "visitor" } }),
    headers: { Cookie: "visitor=v-4242" },
    spread: 1,
  },
  { name: "hash ip", service: "hip", policy: hash({ type: "SourceIP" }), spread: 1 },
  { name: "ewma", service: "ewma", annotations: { [`${A}load-balance`]: "ewma" } },
  {
    name: "sticky cookie",
    service: "sticky",
    annotations: { [`${A}affinity`]: "cookie", [`${A}session-cookie-name`]: "route" },
    spread: 1,
  },
  {
    name: "active check",
    service: "active",
    policy: { healthCheck: { active: { type: "HTTP", http: { path: "/" }, interval: "1s" } } },
  },
  {
    name: "passive check",
    service: "passive",
    policy: { healthCheck: { passive: { consecutive5XxErrors: 5 } } },
  },
  {
    name: "breaker caps",
    service: "cb",
    policy: {
      circuitBreaker: {
        maxParallelRequests: 100_000,
        maxParallelRetries: 100,
        maxConnections: 10_000,
        perEndpoint: { maxConnections: 10_000 },
      },
    },
  },
  {
    name: "reuse 100",
    service: "reuse",
    policy: { circuitBreaker: { maxRequestsPerConnection: 100 } },
  },
  // The full path's written exception: a backend with connection caps gets a connection per request.
  { name: "rr bun", service: "rr", front: "bun", spread: 3 },
  { name: "caps bun", service: "cb", front: "bun" },
];

const hostOf = (row: Row) => `${row.service}.lb.bench`;

/** The folder: IngressClass, and per row a Service with three endpoints, its Ingress and its policy. */
export function balancingManifests(upstreamPort: number, rows: readonly Row[] = balancingRows): string {
  const docs: Record<string, unknown>[] = [
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "gatehouse" },
      spec: { controller: "gatehouse.dev/ingress-controller" },
    },
  ];
  for (const row of rows.filter((r) => r.front === undefined)) {
    const name = row.service;
    docs.push(
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: ns },
        spec: { ports: [{ name: "p", port: 80 }] },
      },
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name: `${name}-1`, namespace: ns, labels: { "kubernetes.io/service-name": name } },
        addressType: "IPv4",
        endpoints: ENDPOINTS.map((a) => ({ addresses: [a], conditions: { ready: true } })),
        ports: [{ name: "p", port: upstreamPort }],
      },
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name, namespace: ns, annotations: row.annotations ?? {} },
        spec: {
          ingressClassName: "gatehouse",
          rules: [
            {
              host: hostOf(row),
              http: {
                paths: [
                  { path: "/", pathType: "Prefix", backend: { service: { name, port: { number: 80 } } } },
                ],
              },
            },
          ],
        },
      },
    );
    if (row.policy !== undefined)
      docs.push({
        apiVersion: "gatehouse.dev/v1alpha1",
        kind: "BackendTrafficPolicy",
        metadata: { name, namespace: ns },
        spec: { targetRefs: [{ group: "", kind: "Service", name }], ...row.policy },
      });
  }
  return docs.map((d) => stringify(d)).join("---\n");
}

/** The headers a row's requests carry; the sticky row's cookie is the one the gateway issues. */
async function rowHeaders(url: string, row: Row): Promise<Record<string, string>> {
  const headers = { Host: hostOf(row), ...(row.headers ?? {}) };
  if (row.name !== "sticky cookie") return headers;
  const res = await fetch(url, { headers: { host: hostOf(row) } });
  await res.text();
  const cookie = res.headers.get("set-cookie")?.split(";")[0];
  if (cookie === undefined) throw new Error("balancing: the sticky route issued no cookie");
  return { ...headers, Cookie: cookie };
}

/** Which endpoints 12 requests with `headers` reach. */
async function reached(url: string, headers: Record<string, string>): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const { Host, ...rest } = headers;
    const res = await fetch(url, { headers: { ...rest, host: Host ?? "" } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`balancing: ${headers.Host} answered ${res.status}`);
    seen.add(text.trim());
  }
  return seen;
}

export async function balancingSection(ctx: BenchContext): Promise<string> {
  const { settings, procs } = ctx;
  const dir = join(ctx.work, "balancing");
  await mkdir(dir, { recursive: true });
  const upstreamFile = join(dir, "endpoints.ts");
  await writeFile(upstreamFile, upstreamSource);
  const upstreamPort = await freePort();
  const upstream = await procs.start(["bun", upstreamFile, String(upstreamPort)], {
    port: upstreamPort,
    expect: "ok",
  });
  await writeFile(join(dir, "lb.yaml"), balancingManifests(upstreamPort));
  const base = balancingRows[0] as Row;
  const out = [
    `one gateway (--workers 1, raw front; "bun" rows: a second on --front bun), 3 endpoints per Service (one upstream process), one host per row; wrk -t1 -c${settings.connections} -d${settings.seconds}s; ${settings.rounds} round(s), order alternating`,
  ];
  const targets: Target[] = [];
  try {
    const gateway = async (extra: string[]) => {
      const port = await freePort();
      const t = await procs.gatehouse({
        dir,
        port,
        workers: 1,
        ready: { probe: "/", host: hostOf(base) },
        extra,
      });
      targets.push(t);
      return t;
    };
    const raw = await gateway([]);
    const bun = await gateway(["--front", "bun"]);
    const urlOf = (row: Row) => `${(row.front === "bun" ? bun : raw).url}/`;
    const headers = new Map<string, Record<string, string>>();
    const checks: string[] = [];
    for (const row of balancingRows) {
      const h = await rowHeaders(urlOf(row), row);
      headers.set(row.name, h);
      const seen = await reached(urlOf(row), h);
      if (row.spread !== undefined && seen.size !== row.spread)
        throw new Error(`balancing: ${row.name} reached ${seen.size} endpoints, expected ${row.spread}`);
      checks.push(`${row.name} ${seen.size}`);
    }
    out.push(`endpoints reached by 12 requests before timing: ${checks.join(", ")}`);
    const load = (row: Row, seconds: number) => ({
      url: urlOf(row),
      headers: headers.get(row.name) ?? {},
      seconds,
      connections: settings.connections,
      threads: 1,
    });
    // One untimed second per row first: the first rows would otherwise pay for the JIT warming up.
    for (const row of balancingRows) await measuredRun(`balancing warm-up: ${row.name}`, [], load(row, 1));
    const pids = { raw: await targetPids(raw), bun: await targetPids(bun) };
    const samples = new Map<string, Run[]>(balancingRows.map((r) => [r.name, []]));
    for (let r = 0; r < settings.rounds; r++)
      for (const row of r % 2 === 0 ? balancingRows : [...balancingRows].reverse()) {
        const run = await measuredRun(
          `balancing: ${row.name}`,
          pids[row.front ?? "raw"],
          load(row, settings.seconds),
        );
        samples.get(row.name)?.push(run);
      }
    out.push(wrkTable(samples, base.name));
  } finally {
    for (const t of targets) await t.stop();
    await procs.stop(upstream);
  }
  return out.join("\n");
}
