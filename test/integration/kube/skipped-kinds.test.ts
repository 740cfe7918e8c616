// Single front: the Kubernetes source alone; no gateway and no listener is started.
/**
 * Gateway API kinds Gatehouse does not serve (XBackendTrafficPolicy) are watched only to be reported: each
 * object that asks something of one of our Gateways (a policy on a Service our routes send to) is in
 * `skipped` (a SkippedKind problem at /debug/problems) and logged once, however many snapshots follow;
 * one on a Service only another implementation's routes use is not ours to judge and is not reported.
 * None of them holds up the first snapshot. GRPCRoutes, once skipped, are served: they are not reported.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { KubeClient, loadKubeConfig } from "../../../src/sources/kubernetes/client.ts";
import { KubernetesSource } from "../../../src/sources/kubernetes/kube-source.ts";
import { skippedProblem } from "../../../src/sources/skipped.ts";
import type { ResourceSnapshot } from "../../../src/sources/snapshot.ts";
import { defaultResources, KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { gateway, gatewayClass, httpRoute, ns, service, within } from "../../helpers/kube-fixtures.ts";

let api: KubeApiServer;
let source: KubernetesSource;
let dir: string;
let restore: ((line: string) => void) | undefined;
const logs: Record<string, unknown>[] = [];
const snapshots: ResourceSnapshot[] = [];

const gwx = "gateway.networking.x-k8s.io";
const policy = (name: string, target = "web"): Obj => ({
  apiVersion: `${gwx}/v1alpha1`,
  kind: "XBackendTrafficPolicy",
  metadata: { name, namespace: ns },
  spec: {
    targetRefs: [{ group: "", kind: "Service", name: target }],
    retryConstraint: { budget: { percent: 20 } },
  },
});
const skippedLogs = () => logs.filter((l) => String(l.msg).includes("Gateway API kind Gatehouse does not"));

beforeAll(async () => {
  restore = setLogSink((line) => logs.push(JSON.parse(line)));
  api = await KubeApiServer.start({
    bookmarkIntervalMs: 200,
    resources: [
      ...defaultResources,
      {
        group: gwx,
        version: "v1alpha1",
        plural: "xbackendtrafficpolicies",
        kind: "XBackendTrafficPolicy",
        namespaced: true,
        status: true,
      },
    ],
  });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-skipped-"));
  api.create(gatewayClass());
  api.create(gateway("gw", 8080));
  api.create({ ...gatewayClass("other"), spec: { controllerName: "example.com/another-controller" } });
  api.create({ ...gateway("other-gw", 8081), spec: { gatewayClassName: "other", listeners: [] } });
  api.create(httpRoute("web-route", "gw", "web.example.com", "web"));
  api.create(httpRoute("theirs", "other-gw", "other.example.com", "other"));
  api.create({ ...httpRoute("served", "gw", "grpc.example.com", "web"), kind: "GRPCRoute" });
  api.create(policy("tls"));
  api.create(policy("foreign", "other"));
  const client = new KubeClient(loadKubeConfig(await api.writeKubeconfig(join(dir, "kubeconfig"))));
  source = new KubernetesSource(client, (snapshot) => snapshots.push(snapshot), {
    debounceMs: 5,
    gatewayController: "gatehouse.dev/gateway-controller",
  });
  await source.start();
});

afterAll(async () => {
  source?.stop();
  await api?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

describe("skipped Gateway API kinds", () => {
  test("each object is reported and logged once; new ones as they come; gone ones leave", async () => {
    await within(2000, () => source.skipped.length === 1);
    expect(source.skipped).toEqual([
      { kind: "XBackendTrafficPolicy", apiVersion: `${gwx}/v1alpha1`, namespace: ns, name: "tls" },
    ]);
    expect(snapshots.at(-1)?.grpcRoutes.map((r) => r.metadata.name)).toEqual(["served"]);
    expect(skippedProblem(source.skipped[0] as (typeof source.skipped)[0])).toMatchObject({
      object: { kind: "XBackendTrafficPolicy", namespace: ns, name: "tls" },
      reason: "SkippedKind",
      severity: "warning",
    });
    // Another snapshot (a Service changes) does not log the policy again.
    const n = snapshots.length;
    api.create(service("web"));
    await within(2000, () => snapshots.length > n);
    expect(skippedLogs().map((l) => [l.kind, l.name, l.level])).toEqual([
      ["XBackendTrafficPolicy", `${ns}/tls`, "warn"],
    ]);
    // Another one arrives: reported and logged; removing the first drops it from the report.
    api.create(policy("extra"));
    await within(2000, () => source.skipped.some((s) => s.name === "extra"));
    api.remove("XBackendTrafficPolicy", ns, "tls");
    await within(2000, () => !source.skipped.some((s) => s.name === "tls"));
    expect(source.skipped.map((s) => `${s.kind}/${s.name}`)).toEqual(["XBackendTrafficPolicy/extra"]);
    expect(skippedLogs().map((l) => [l.kind, l.name])).toEqual([
      ["XBackendTrafficPolicy", `${ns}/tls`],
      ["XBackendTrafficPolicy", `${ns}/extra`],
    ]);
  });

  test("every skipped kind is served by this API server: none is said to be absent", () => {
    const absent = logs.filter((l) => String(l.msg).startsWith("the API server does not serve this kind"));
    expect(absent.map((l) => [l.kind, l.level])).toEqual([]);
  });
});
