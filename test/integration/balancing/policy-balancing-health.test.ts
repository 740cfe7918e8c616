/**
 * A BackendTrafficPolicy's `loadBalancer` and `healthCheck.active` live on both fronts, from a folder.
 * `hash`: three pods, consistent hash on header X-User by policy (the Ingress sets no algorithm): a user
 * stays on one pod, users spread. `web`: three pods probed on /healthz every 200 ms, out after 2 failures,
 * back after 1 success: a pod whose health path answers 500 stops getting traffic within about
 * interval × threshold, shows in `/debug/health` and the probe metric, and takes traffic again once it
 * passes. `pair`: both pods fail their probes: both keep taking traffic (no endpoint healthy: all are
 * used, Envoy's panic mode).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

/** A pod answering `{"pod": name}`; its /healthz answers `health`. It counts both. */
function startPod(name: string) {
  const pod = {
    name,
    health: 200,
    hits: 0,
    probes: 0,
    server: undefined as ReturnType<typeof Bun.serve> | undefined,
  };
  pod.server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      if (new URL(req.url).pathname === "/healthz") {
        pod.probes++;
        return new Response("", { status: pod.health });
      }
      pod.hits++;
      return Response.json({ pod: name });
    },
  });
  return pod;
}
type Pod = ReturnType<typeof startPod>;

function services(ns: string, name: string, pods: readonly Pod[]): string {
  const slices = pods.map(
    (p, i) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-${i}, namespace: ${ns}, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${p.server?.port} }]
`,
  );
  return [
    `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: ${ns} }\nspec: { ports: [{ port: 80 }] }\n`,
    ...slices,
  ].join("---\n");
}

function policy(ns: string, service: string, spec: Record<string, unknown>): string {
  return `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${service}, namespace: ${ns} }
spec: ${JSON.stringify({ targetRefs: [{ group: "", kind: "Service", name: service }], ...spec })}
`;
}

async function until(ms: number, ok: () => Promise<boolean> | boolean): Promise<number> {
  const start = performance.now();
  while (!(await ok())) {
    if (performance.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await Bun.sleep(20);
  }
  return performance.now() - start;
}

const ACTIVE = {
  type: "HTTP",
  http: { path: "/healthz" },
  interval: "200ms",
  timeout: "500ms",
  unhealthyThreshold: 2,
  healthyThreshold: 1,
};

forEachFront("BackendTrafficPolicy loadBalancer and active health checks, live", (front) => {
  const ns = `btp-${front}`;
  let hash: Pod[];
  let web: Pod[];
  let pair: Pod[];
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    hash = ["a", "b", "c"].map((n) => startPod(`hash-${n}`));
    web = ["a", "b", "c"].map((n) => startPod(`web-${n}`));
    pair = ["d", "e"].map((n) => startPod(`pair-${n}`));
    dir = await mkdtemp(join(tmpdir(), "gatehouse-btp-"));
    const ingress = (name: string, service: string) =>
      annotatedIngressYaml({ name, namespace: ns, host: `${name}.test`, service, annotations: {} });
    const docs = [
      ingress("hash", "hash"),
      ingress("web", "web"),
      ingress("pair", "pair"),
      services(ns, "hash", hash),
      services(ns, "web", web),
      services(ns, "pair", pair),
      policy(ns, "hash", {
        loadBalancer: {
          type: "ConsistentHash",
          consistentHash: { type: "Header", header: { name: "X-User" } },
        },
      }),
      policy(ns, "web", { healthCheck: { active: ACTIVE } }),
      policy(ns, "pair", { healthCheck: { active: ACTIVE } }),
    ];
    await writeFile(join(dir, "btp.yaml"), docs.join("---\n"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]));
  });

  afterAll(async () => {
    await gw?.stop();
    for (const p of [...(hash ?? []), ...(web ?? []), ...(pair ?? [])]) p.server?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function get(host: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host, ...headers } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { pod: string }).pod;
  }

  async function health(backend: string) {
    const all = (await (await fetch(`http://127.0.0.1:${gw.admin.port}/debug/health`)).json()) as {
      backend: string;
      active?: { endpoints: { endpoint: string; healthy: boolean; last: string }[] };
    }[];
    return all.find((d) => d.backend === backend);
  }

  test("consistent hash on a header, set by the policy: a user keeps one pod, users spread", async () => {
    const byUser = new Map<string, Set<string>>();
    for (let u = 0; u < 12; u++)
      for (let i = 0; i < 4; i++) {
        const pod = await get("hash.test", { "x-user": `user-${u}` });
        byUser.set(`user-${u}`, (byUser.get(`user-${u}`) ?? new Set()).add(pod));
      }
    for (const pods of byUser.values()) expect(pods.size).toBe(1);
    const used = new Set([...byUser.values()].flatMap((s) => [...s]));
    expect(used.size).toBeGreaterThan(1);
    // Without the header, round robin: every pod.
    const plain = new Set<string>();
    for (let i = 0; i < 6; i++) plain.add(await get("hash.test"));
    expect(plain.size).toBe(3);
  });

  test("a pod whose health path answers 500 takes no traffic within interval × threshold, then returns", async () => {
    const [, b] = web as [Pod, Pod, Pod];
    const base = `http://127.0.0.1:${b.server?.port}`;
    // Probed from the start, bounded: one probe per endpoint per interval.
    await until(2000, () => b.probes >= 2);
    b.health = 500;
    const failedAt = performance.now();
    await until(
      3000,
      async () =>
        (await health(`${ns}/web:80`))?.active?.endpoints.some((e) => e.endpoint === base && !e.healthy) ===
        true,
    );
    const tookMs = performance.now() - failedAt;
    // 2 probes × (200 ms + ≤ 20 ms jitter), the first one up to an interval away, plus polling.
    expect(tookMs).toBeLessThan(1200);
    const hits = b.hits;
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add(await get("web.test"));
    expect(b.hits).toBe(hits);
    expect(seen).toEqual(new Set(["web-a", "web-c"]));
    const metrics = await (await fetch(`http://127.0.0.1:${gw.admin.port}/metrics`)).text();
    const failures = metrics.match(
      new RegExp(`gatehouse_health_checks_total\\{backend="${ns}/web:80",result="failure"\\} (\\d+)`),
    );
    expect(Number(failures?.[1] ?? 0)).toBeGreaterThanOrEqual(2);

    b.health = 200;
    await until(
      2000,
      async () => (await health(`${ns}/web:80`))?.active?.endpoints.every((e) => e.healthy) === true,
    );
    const back = new Set<string>();
    for (let i = 0; i < 9; i++) back.add(await get("web.test"));
    expect(back).toEqual(new Set(["web-a", "web-b", "web-c"]));
  });

  test("every pod failing its probes: all keep taking traffic (panic), none is left out", async () => {
    for (const p of pair) p.health = 503;
    await until(
      3000,
      async () => (await health(`${ns}/pair:80`))?.active?.endpoints.every((e) => !e.healthy) === true,
    );
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add(await get("pair.test"));
    expect(seen).toEqual(new Set(["pair-d", "pair-e"]));
  });
});
