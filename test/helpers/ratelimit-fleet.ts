/**
 * Rate limit tests against real gateways: a folder of manifests (one Ingress per limited path, each with
 * its own RateLimitPolicy, all on host `rl.test` in front of one echo backend) served by `gatehouse serve`
 * processes started as users start them, sharing a real redis-server when given its URL.
 * `close()` kills every process it started, pass or fail.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "./echo-server.ts";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process.ts";
import { freePort } from "./ports.ts";

export const rlHost = "rl.test";

/** One limited path: an Ingress `name` for `path` and, when `policy` is given, a RateLimitPolicy on it. */
export interface LimitedPath {
  readonly name: string;
  readonly path: string;
  /** The policy's spec without `targetRefs`, as YAML lines indented by 2 (e.g. `  rules: [...]`). */
  readonly policy?: string;
  /** The Ingress's annotations, keys without the `nginx.ingress.kubernetes.io/` prefix. */
  readonly annotations?: Readonly<Record<string, string>>;
}

export function rateLimitManifests(echoPort: number, paths: readonly LimitedPath[]): string {
  const docs = [
    `apiVersion: v1
kind: Service
metadata: { name: web, namespace: rl }
spec: { ports: [{ port: 80 }] }`,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-1, namespace: rl, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1] }]
ports: [{ port: ${echoPort} }]`,
  ];
  for (const p of paths) {
    const annotations = Object.entries(p.annotations ?? {})
      .map(([k, v]) => `\n    nginx.ingress.kubernetes.io/${k}: ${JSON.stringify(v)}`)
      .join("");
    docs.push(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${p.name}
  namespace: rl${annotations === "" ? "" : `\n  annotations:${annotations}`}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${rlHost}
      http:
        paths:
          - { path: ${p.path}, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }`);
    if (p.policy !== undefined)
      docs.push(`apiVersion: gatehouse.dev/v1alpha1
kind: RateLimitPolicy
metadata: { name: ${p.name}, namespace: rl }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: ${p.name} }]
${p.policy}`);
  }
  return `${docs.join("\n---\n")}\n`;
}

export interface Fleet {
  readonly gateways: readonly GatewayProcess[];
  readonly echo: EchoServer;
  /** `http://127.0.0.1:<port>` of gateway `i`. */
  base(i: number): string;
  /** GET `path` on gateway `i` with Host `rl.test`; the body is read (so the connection is reused). */
  get(i: number, path: string, headers?: Record<string, string>): Promise<Response>;
  /** The value of one sample in gateway `i`'s /metrics (0 when absent), `series` written as exposed. */
  metric(i: number, series: string): Promise<number>;
  close(): Promise<void>;
}

/** Start `count` gateway processes (one serving process each) on the same folder. */
export async function startFleet(
  count: number,
  paths: readonly LimitedPath[],
  extra: readonly string[] = [],
): Promise<Fleet> {
  const echo = startEchoServer({ service: "web" });
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-rl-"));
  const gateways: GatewayProcess[] = [];
  const close = async () => {
    await Promise.all(gateways.map((g) => g.kill()));
    await echo.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await writeFile(join(dir, "all.yaml"), rateLimitManifests(echo.port, paths));
    const flags = ["--workers", "1", "--access-log-sample", "0", "--log-level", "warn", ...extra];
    // One at a time: three Bun processes compiling at once on two cores only start slower.
    for (let i = 0; i < count; i++)
      gateways.push(await startGatewayProcess(dir, [...flags, "--https-port", String(await freePort())]));
  } catch (err) {
    await close();
    throw err;
  }
  const base = (i: number) => `http://127.0.0.1:${(gateways[i] as GatewayProcess).httpPort}`;
  return {
    gateways,
    echo,
    base,
    async get(i, path, headers = {}) {
      const res = await fetch(base(i) + path, { headers: { host: rlHost, ...headers } });
      await res.arrayBuffer();
      return res;
    },
    async metric(i, series) {
      const text = await (
        await fetch(`http://127.0.0.1:${(gateways[i] as GatewayProcess).adminPort}/metrics`)
      ).text();
      for (const line of text.split("\n"))
        if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
      return 0;
    },
    close,
  };
}

/** The `Degraded` condition of RateLimitPolicy `rl/<name>` in gateway `i`'s /debug/status, if any. */
export async function degradedStatus(fleet: Fleet, i: number, name: string): Promise<string | undefined> {
  const g = fleet.gateways[i] as GatewayProcess;
  const statuses = (await (await fetch(`http://127.0.0.1:${g.adminPort}/debug/status`)).json()) as {
    target: { kind: string; name: string };
    status: { ancestors?: { conditions: { type: string; status: string }[] }[] };
  }[];
  const s = statuses.find((x) => x.target.kind === "RateLimitPolicy" && x.target.name === name);
  return s?.status.ancestors?.[0]?.conditions.find((c) => c.type === "Degraded")?.status;
}

export function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}
