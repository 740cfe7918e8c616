/**
 * ScaleToZeroPolicy through `gatehouse serve --kube` against the test API server, whose Deployment
 * controller (kube-deployment-controller.ts) starts a pod and publishes its ready EndpointSlice a while
 * after replicas go 0 → 1, on both fronts: a cold start holds the first requests (concurrent ones too) and
 * releases them the moment the slice is ready, with one scale write; the leader scales the Deployment back
 * to 0 after the idle period; a full queue and the hold time answer 503 with Retry-After; a 403 on the
 * scale subresource is a `Scaling` condition on the policy and a plain 503 at once, never a hang.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { DeploymentController } from "../../helpers/kube-deployment-controller.ts";
import { ingress, ns, service, within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const policy: Obj = {
  apiVersion: "gatehouse.dev/v1alpha1",
  kind: "ScaleToZeroPolicy",
  metadata: { name: "fn", namespace: ns },
  spec: {
    targetRefs: [{ group: "", kind: "Service", name: "fn" }],
    workload: { kind: "Deployment", name: "fn" },
    idlePeriod: "1s",
    maxHoldTime: "1500ms",
    queueLimit: 3,
  },
};

/** Wake latencies measured on both fronts, printed at the end for docs/scale-to-zero.md. */
const measured: Record<string, number[]> = { raw: [], bun: [] };

forEachFront("ScaleToZeroPolicy through the Kubernetes source", (front) => {
  let api: KubeApiServer;
  let controller: DeploymentController;
  let gw: RunningGateway;
  let port: number;
  let dir: string;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    controller = new DeploymentController(api, {
      services: { fn: "fn" },
      readyDelayMs: 300,
      startPod: (name) => {
        const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ pod: name }) });
        return { port: s.port as number, stop: () => s.stop(true) };
      },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-scale-to-zero-"));
    api.create(service("fn"));
    api.create(DeploymentController.deployment("fn", ns, 0));
    api.create(ingress("fn", "fn.test", "/", "fn"));
    api.create(policy);
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
    ({ gw, port } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      [
        ...["--front", front, "--access-log-sample", "0"],
        ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
      ],
      // The default debounce: the wake must not wait for it (the short path, endpoint-wake.ts).
      100,
    ));
  });

  afterAll(async () => {
    await gw?.stop();
    controller?.stop();
    await api?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async (init: RequestInit = {}) => {
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`, { ...init, headers: { host: "fn.test" } });
    const body = await res.text();
    return {
      status: res.status,
      body,
      retryAfter: res.headers.get("retry-after"),
      ms: performance.now() - started,
      at: performance.now(),
    };
  };
  const replicas = () => api.get("Deployment", ns, "fn").spec.replicas as number;
  // biome-ignore lint/suspicious/noExplicitAny: a status as the API returned it
  const condition = (type: string): any =>
    api
      .get("ScaleToZeroPolicy", ns, "fn")
      .status?.ancestors?.[0]?.conditions?.find((c: Obj) => c.type === type);
  const scaleWrites = () => api.calls.filter((c) => c.subresource === "scale" && c.verb === "patch").length;
  /** Asleep as the gateway sees it: no endpoint compiled, and none trusted from an EndpointSlice event. */
  const asleep = () =>
    within(8000, async () => {
      if (replicas() !== 0 || gw.state.model?.backends["demo/fn:80"]?.endpoints.length !== 0) return false;
      const debug = (await (
        await fetch(`http://127.0.0.1:${gw.admin.port}/debug/activation`)
      ).json()) as Obj[];
      return debug[0]?.endpoints === 0;
    });

  test("Accepted, with the Scaling condition Active", async () => {
    await within(5000, () => condition("Scaling") !== undefined);
    expect(condition("Accepted")).toMatchObject({ status: "True", reason: "Accepted" });
    expect(condition("Scaling")).toMatchObject({ status: "True", reason: "Active" });
  });

  test("cold start: concurrent requests are held and released the moment the slice is ready", async () => {
    const writes = scaleWrites();
    const answers = await Promise.all([get(), get(), get()]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(answers[0]?.body ?? "{}")).toEqual({ pod: "fn" });
    expect(replicas()).toBe(1);
    expect(controller.events.filter((e) => e === "up:fn")).toHaveLength(1);
    // Three requests, at most one scale write per request that found it asleep; only one changed it.
    expect(scaleWrites() - writes).toBeGreaterThanOrEqual(1);
    const ready = controller.readyAt.at(-1) as number;
    const added = Math.min(...answers.map((a) => a.at)) - ready;
    measured[front]?.push(added);
    expect(Math.min(...answers.map((a) => a.ms))).toBeGreaterThanOrEqual(250); // they did wait for the pod
    // Goal < 50 ms, and below the 100 ms debounce: the short path released them, not the rebuild.
    expect(added).toBeLessThan(90);
    const debug = (await (await fetch(`http://127.0.0.1:${gw.admin.port}/debug/activation`)).json()) as Obj[];
    expect(debug[0]?.wakeReleaseMs.length).toBeGreaterThanOrEqual(1);
  });

  test("scaled to zero by the leader after the idle period, and woken again", async () => {
    await asleep();
    expect(controller.events.at(-1)).toBe("down:fn");
    const again = await get();
    expect(again.status).toBe(200);
    const ready = controller.readyAt.at(-1) as number;
    measured[front]?.push(again.at - ready);
  });

  test("a full queue answers 503 with Retry-After at once; the held ones are served", async () => {
    await asleep();
    const answers = await Promise.all([get(), get(), get(), get(), get()]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 503, 503]);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.retryAfter).toBe("2");
      expect(a.ms).toBeLessThan(250);
    }
  });

  test("the hold time passing answers 503 with Retry-After", async () => {
    await asleep();
    const lift = api.delay((c) => c.subresource === "scale", 2500);
    try {
      const a = await get();
      expect(a.status).toBe(503);
      expect(a.retryAfter).toBe("2");
      expect(a.ms).toBeGreaterThanOrEqual(1400);
      expect(a.ms).toBeLessThan(2400);
    } finally {
      lift();
    }
    const debug = (await (await fetch(`http://127.0.0.1:${gw.admin.port}/debug/activation`)).json()) as Obj[];
    expect(debug[0]).toMatchObject({ backend: "demo/fn:80", held: 0 });
    expect(debug[0]?.totals.timedOut).toBeGreaterThanOrEqual(1);
  });

  test("an API server failing during the wake: 503 with Retry-After after the hold time, never a hang; woken once it is back", async () => {
    // The delayed wake of the last test lands; put the Deployment back to sleep by hand.
    await within(5000, () => replicas() === 1);
    api.apply(DeploymentController.deployment("fn", ns, 0));
    await asleep();
    api.setFault("error");
    try {
      const a = await get();
      expect(a.status).toBe(503);
      expect(a.retryAfter).not.toBeNull();
      expect(a.ms).toBeGreaterThanOrEqual(1400);
      expect(a.ms).toBeLessThan(3000);
    } finally {
      api.setFault("none");
    }
    expect(replicas()).toBe(0);
    // Back: the next request wakes it (the informers resync on their own).
    const b = await get();
    expect(b.status).toBe(200);
    expect(replicas()).toBe(1);
  });

  test("403 on the scale subresource: ScaleForbidden on the policy and a plain 503 at once", async () => {
    api.apply(DeploymentController.deployment("fn", ns, 0));
    await asleep();
    const lift = api.forbid((c) => c.subresource === "scale");
    try {
      const a = await get();
      expect(a.status).toBe(503);
      expect(a.retryAfter).toBeNull();
      expect(a.ms).toBeLessThan(1000);
      await within(5000, () => condition("Scaling")?.status === "False");
      expect(condition("Scaling")).toMatchObject({ reason: "ScaleForbidden" });
    } finally {
      lift();
    }
  });
});

afterAll(() => {
  const show = (xs: number[] | undefined) => (xs ?? []).map((x) => x.toFixed(1)).join(", ");
  console.log(
    `wake latency beyond the slice going ready (ms): raw ${show(measured.raw)}; bun ${show(measured.bun)}`,
  );
});
