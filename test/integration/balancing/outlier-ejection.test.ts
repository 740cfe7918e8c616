/**
 * Passive health checking live on both fronts, from a folder (a BackendTrafficPolicy as a user writes it,
 * through translation): Service `web` has three pods and ejects one after 3 consecutive 5xx for 1 s. A
 * pod that starts failing is left within 3 of its requests (round robin and EWMA alike), shows in
 * `/debug/health` and the metrics, and takes traffic again once its time is over. When every pod of
 * Service `pair` fails, one is ejected and the last never is: the backends keep answering (their 500s).
 * A retried request never goes back to the pod that just failed (Service `flaky`, no policy: the retry
 * alone does it), even with other requests moving the round robin in between.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

/** A pod answering `{"pod": name}`, or `failWith` while that is set; it counts what it is sent. */
function startPod(name: string) {
  const pod = { name, failWith: 0, hits: 0, server: undefined as ReturnType<typeof Bun.serve> | undefined };
  pod.server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      pod.hits++;
      return Response.json({ pod: name }, { status: pod.failWith || 200 });
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
  const svc = `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${ns} }
spec: { ports: [{ port: 80 }] }
`;
  return [svc, ...slices].join("---\n");
}

function policy(ns: string, service: string, passive: Record<string, unknown>): string {
  return `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${service}, namespace: ${ns} }
spec:
  targetRefs: [{ group: "", kind: Service, name: ${service} }]
  healthCheck: { passive: ${JSON.stringify(passive)} }
`;
}

forEachFront("passive health checking (outlier ejection), live", (front) => {
  // Each front's gateway has its own backend ids: the detectors (per process) start afresh.
  const ns = `health-${front}`;
  let web: Pod[];
  let pair: Pod[];
  let flaky: Pod[];
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    web = ["a", "b", "c"].map((n) => startPod(`web-${n}`));
    pair = ["d", "e"].map((n) => startPod(`pair-${n}`));
    flaky = ["f", "g"].map((n) => startPod(`flaky-${n}`));
    dir = await mkdtemp(join(tmpdir(), "gatehouse-health-"));
    const ingress = (name: string, service: string, annotations: Record<string, string> = {}) =>
      annotatedIngressYaml({ name, namespace: ns, host: `${name}.test`, service, annotations });
    const docs = [
      ingress("eject", "web"),
      ingress("ewma", "web", { "load-balance": "ewma" }),
      ingress("pair", "pair"),
      ingress("retry", "flaky", {
        "proxy-next-upstream": "error http_503",
        "proxy-next-upstream-tries": "2",
      }),
      services(ns, "web", web),
      services(ns, "pair", pair),
      services(ns, "flaky", flaky),
      policy(ns, "web", { consecutive5XxErrors: 3, baseEjectionTime: "1s", interval: "1s" }),
      policy(ns, "pair", { consecutive5XxErrors: 2, maxEjectionPercent: 100, baseEjectionTime: "30s" }),
    ];
    await writeFile(join(dir, "health.yaml"), docs.join("---\n"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]));
  });

  afterAll(async () => {
    await gw?.stop();
    for (const p of [...(web ?? []), ...(pair ?? []), ...(flaky ?? [])]) p.server?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function get(host: string): Promise<{ status: number; pod: string }> {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host } });
    const body = (await res.json().catch(() => ({}))) as { pod?: string };
    return { status: res.status, pod: body.pod ?? "" };
  }

  async function admin(path: string): Promise<Response> {
    return fetch(`http://127.0.0.1:${gw.admin.port}${path}`);
  }

  test("a failing pod is left within 3 of its requests, reported, and comes back after its time", async () => {
    const [, b] = web as [Pod, Pod, Pod];
    b.failWith = 500;
    // Round robin over three: b's third request in a row fails within nine.
    const first: string[] = [];
    for (let i = 0; i < 9; i++) first.push((await get("eject.test")).pod);
    expect(first.filter((p) => p === "web-b")).toHaveLength(3);
    const ejectedAt = performance.now();
    const hitsAtEjection = b.hits;
    const after: { status: number; pod: string }[] = [];
    for (let i = 0; i < 20; i++) after.push(await get("eject.test"));
    for (let i = 0; i < 20; i++) after.push(await get("ewma.test"));
    expect(b.hits).toBe(hitsAtEjection);
    expect(after.every((r) => r.status === 200 && r.pod !== "web-b")).toBe(true);
    expect(new Set(after.map((r) => r.pod))).toEqual(new Set(["web-a", "web-c"]));

    const debug = (await (await admin("/debug/health")).json()) as {
      backend: string;
      ejected: { endpoint: string; returnsInMs: number }[];
      ejectionsTotal: number;
    }[];
    const entry = debug.find((d) => d.backend === `${ns}/web:80`);
    expect(entry?.ejected.map((e) => e.endpoint)).toEqual([`http://127.0.0.1:${b.server?.port}`]);
    expect(entry?.ejectionsTotal).toBe(1);
    const metrics = await (await admin("/metrics")).text();
    expect(metrics).toContain(`gatehouse_outlier_ejections_total{backend="${ns}/web:80"} 1`);
    expect(metrics).toContain(`gatehouse_outlier_ejected_endpoints{backend="${ns}/web:80"} 1`);

    // Healthy again: it takes traffic once the 1 s ejection is over, not before.
    b.failWith = 0;
    await within(5000, async () => (await get("eject.test")).pod === "web-b");
    expect(performance.now() - ejectedAt).toBeGreaterThan(900);
    const back = await admin("/metrics");
    expect(await back.text()).toContain(`gatehouse_outlier_ejected_endpoints{backend="${ns}/web:80"} 0`);
  });

  test("every pod failing: one is ejected, never the last, and the backends keep answering", async () => {
    for (const p of pair) p.failWith = 500;
    const answers: { status: number; pod: string }[] = [];
    for (let i = 0; i < 20; i++) answers.push(await get("pair.test"));
    // The backends' own 500s (their bodies name them), never a gateway 502/503 for an emptied backend.
    expect(answers.every((r) => r.status === 500 && r.pod.startsWith("pair-"))).toBe(true);
    const debug = (await (await admin("/debug/health")).json()) as {
      backend: string;
      ejected: unknown[];
      refusedTotal: { last_endpoint: number };
    }[];
    const entry = debug.find((d) => d.backend === `${ns}/pair:80`);
    expect(entry?.ejected).toHaveLength(1);
    expect(entry?.refusedTotal.last_endpoint).toBeGreaterThan(0);
    // All the traffic after the ejection went to the one left.
    expect(new Set(answers.slice(-10).map((r) => r.pod)).size).toBe(1);
    const metrics = await (await admin("/metrics")).text();
    expect(metrics).toMatch(
      new RegExp(
        `gatehouse_outlier_ejections_refused_total\\{backend="${ns}/pair:80",reason="last_endpoint"\\} [1-9]`,
      ),
    );
  });

  test("a retry never goes back to the pod that just failed, with other requests in between", async () => {
    const [f, g] = flaky as [Pod, Pod];
    f.failWith = 503;
    // Twenty at once: between one request's attempts, others move the shared round-robin position.
    const answers = await Promise.all(Array.from({ length: 20 }, () => get("retry.test")));
    expect(answers.map((r) => r.status)).toEqual(new Array(20).fill(200));
    expect(answers.every((r) => r.pod === "flaky-g")).toBe(true);
    // Round robin sent about half the first attempts to f: each was retried on g.
    expect(f.hits).toBeGreaterThan(0);
    expect(g.hits).toBe(20);
  });
});
