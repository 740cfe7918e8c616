/**
 * `scaler: Gateway` beside a KEDA ScaledObject on the same workload, against the test API server (which
 * serves keda.sh/v1alpha1 scaledobjects here): a ScaledObject that may scale the workload to 0
 * (`minReplicaCount` 0 or absent) is a `Scaling: False, ConflictingAutoscaler` condition naming it, and
 * the gateway neither scales the workload down nor wakes it: it only holds requests while "KEDA" (the
 * test) wakes it. With `minReplicaCount: 1` there is no conflict and the gateway scales it down again.
 * RBAC forbidding the list is said in the condition. Both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { defaultResources } from "../../helpers/kube-api-store.ts";
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
    maxHoldTime: "5s",
  },
};

const scaledObject = (minReplicaCount?: number): Obj => ({
  apiVersion: "keda.sh/v1alpha1",
  kind: "ScaledObject",
  metadata: { name: "fn-keda", namespace: ns },
  spec: {
    scaleTargetRef: { name: "fn" },
    ...(minReplicaCount !== undefined ? { minReplicaCount } : {}),
    triggers: [{ type: "prometheus", metadata: {} }],
  },
});

const resources = [
  ...defaultResources,
  {
    group: "keda.sh",
    version: "v1alpha1",
    plural: "scaledobjects",
    kind: "ScaledObject",
    namespaced: true,
    status: false,
  },
];

async function setup(front: string, forbidKeda: boolean) {
  const api = await KubeApiServer.start({ bookmarkIntervalMs: 200, resources });
  if (forbidKeda) api.forbid((c) => c.resource === "scaledobjects");
  const controller = new DeploymentController(api, {
    services: { fn: "fn" },
    readyDelayMs: 200,
    startPod: (name) => {
      const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ pod: name }) });
      return { port: s.port as number, stop: () => s.stop(true) };
    },
  });
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-scale-keda-"));
  api.create(service("fn"));
  api.create(DeploymentController.deployment("fn", ns, 1));
  api.create(ingress("fn", "fn.test", "/", "fn"));
  if (!forbidKeda) api.create(scaledObject());
  api.create(policy);
  const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
  const { gw, port } = await startTestGateway(
    ["--kube", "--kubeconfig", kubeconfig],
    [
      ...["--front", front, "--access-log-sample", "0"],
      ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
    ],
  );
  const condition = (): Obj | undefined =>
    (api.get("ScaleToZeroPolicy", ns, "fn").status?.ancestors?.[0]?.conditions as Obj[] | undefined)?.find(
      (c) => c.type === "Scaling",
    );
  const replicas = () => api.get("Deployment", ns, "fn").spec.replicas as number;
  const get = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "fn.test" } });
    return { status: res.status, body: await res.text() };
  };
  const close = async () => {
    await gw.stop();
    controller.stop();
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  };
  return { api, controller, gw, condition, replicas, get, close };
}

forEachFront("ScaleToZeroPolicy beside a KEDA ScaledObject", (front) => {
  let s: Awaited<ReturnType<typeof setup>>;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    s = await setup(front, false);
  });

  afterAll(async () => {
    await s?.close();
    if (restore) setLogSink(restore);
  });

  test("ConflictingAutoscaler: the gateway neither scales down nor wakes; it holds until KEDA wakes", async () => {
    await within(5000, () => s.condition()?.reason === "ConflictingAutoscaler");
    expect(s.condition()).toMatchObject({ status: "False" });
    expect(s.condition()?.message).toContain("ScaledObject demo/fn-keda");
    await within(5000, async () => (await s.get()).status === 200);

    // Idle well past idlePeriod (1 s) and the cooldown: still 1 replica, no scale write.
    const scaleWrites = () => s.api.calls.filter((c) => c.subresource === "scale").length;
    await Bun.sleep(2500);
    expect(s.replicas()).toBe(1);
    expect(scaleWrites()).toBe(0);

    // KEDA scales it to 0; a request is held (not woken by the gateway) until KEDA wakes it.
    s.api.apply(DeploymentController.deployment("fn", ns, 0));
    await within(5000, () => s.gw.state.model?.backends["demo/fn:80"]?.endpoints.length === 0);
    const held = s.get();
    await Bun.sleep(800);
    expect(s.replicas()).toBe(0);
    expect(scaleWrites()).toBe(0);
    s.api.apply(DeploymentController.deployment("fn", ns, 1));
    expect(await held).toEqual({ status: 200, body: JSON.stringify({ pod: "fn" }) });
    expect(scaleWrites()).toBe(0);
    expect(s.controller.events).toEqual(["up:fn", "down:fn", "up:fn"]);
  }, 20_000);

  test("minReplicaCount 1: no conflict, the gateway scales the idle workload to 0 again", async () => {
    s.api.apply(scaledObject(1));
    await within(5000, () => s.condition()?.reason === "Active");
    expect(s.condition()).toMatchObject({ status: "True" });
    await within(8000, () => s.replicas() === 0);
  }, 15_000);
});

forEachFront("ScaleToZeroPolicy when RBAC forbids listing ScaledObjects", (front) => {
  let s: Awaited<ReturnType<typeof setup>>;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    s = await setup(front, true);
  });

  afterAll(async () => {
    await s?.close();
    if (restore) setLogSink(restore);
  });

  test("the condition says the gateway could not check; it still scales", async () => {
    await within(5000, () => (s.condition()?.message as string | undefined)?.includes("RBAC") === true);
    expect(s.condition()).toMatchObject({ status: "True", reason: "Active" });
    expect(s.condition()?.message).toContain("keda.sh scaledobjects");
    await within(8000, () => s.replicas() === 0);
  }, 15_000);
});
