// Single front: the Kubernetes source alone; no gateway and no listener is started.
/**
 * Gateway API kinds Gatehouse does not serve (GRPCRoute, BackendTLSPolicy) are watched only to be reported:
 * each object that names one of our Gateways is in `skipped` (a SkippedKind problem at /debug/problems)
 * and logged once, however many snapshots follow; one attached to another implementation's Gateway is
 * not ours to judge and is not reported. A kind the API server does not serve (here BackendTLSPolicy) is just empty,
 * and none of them holds up the first snapshot.
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
import { gateway, gatewayClass, ns, service, within } from "../../helpers/kube-fixtures.ts";

let api: KubeApiServer;
let source: KubernetesSource;
let dir: string;
let restore: ((line: string) => void) | undefined;
const logs: Record<string, unknown>[] = [];
const snapshots: ResourceSnapshot[] = [];

const gw = "gateway.networking.k8s.io";
const grpcRoute = (name: string, parent = "gw"): Obj => ({
  apiVersion: `${gw}/v1`,
  kind: "GRPCRoute",
  metadata: { name, namespace: ns },
  spec: { parentRefs: [{ name: parent }], rules: [{ backendRefs: [{ name: "web", port: 80 }] }] },
});
const skippedLogs = () => logs.filter((l) => String(l.msg).includes("Gateway API kind Gatehouse does not"));

beforeAll(async () => {
  restore = setLogSink((line) => logs.push(JSON.parse(line)));
  api = await KubeApiServer.start({
    bookmarkIntervalMs: 200,
    resources: [
      ...defaultResources,
      { group: gw, version: "v1", plural: "grpcroutes", kind: "GRPCRoute", namespaced: true, status: true },
    ],
  });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-skipped-"));
  api.create(gatewayClass());
  api.create(gateway("gw", 8080));
  api.create({ ...gatewayClass("other"), spec: { controllerName: "example.com/another-controller" } });
  api.create({ ...gateway("other-gw", 8081), spec: { gatewayClassName: "other", listeners: [] } });
  api.create(grpcRoute("grpc"));
  api.create(grpcRoute("foreign", "other-gw"));
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
      { kind: "GRPCRoute", apiVersion: `${gw}/v1`, namespace: ns, name: "grpc" },
    ]);
    expect(skippedProblem(source.skipped[0] as (typeof source.skipped)[0])).toMatchObject({
      object: { kind: "GRPCRoute", namespace: ns, name: "grpc" },
      reason: "SkippedKind",
      severity: "warning",
    });
    // Another snapshot (a Service changes) does not log the GRPCRoute again.
    const n = snapshots.length;
    api.create(service("web"));
    await within(2000, () => snapshots.length > n);
    expect(skippedLogs().map((l) => [l.kind, l.name, l.level])).toEqual([
      ["GRPCRoute", `${ns}/grpc`, "warn"],
    ]);
    // Another one arrives: reported and logged; removing the first drops it from the report.
    api.create(grpcRoute("extra"));
    await within(2000, () => source.skipped.some((s) => s.name === "extra"));
    api.remove("GRPCRoute", ns, "grpc");
    await within(2000, () => !source.skipped.some((s) => s.name === "grpc"));
    expect(source.skipped.map((s) => `${s.kind}/${s.name}`)).toEqual(["GRPCRoute/extra"]);
    expect(skippedLogs().map((l) => [l.kind, l.name])).toEqual([
      ["GRPCRoute", `${ns}/grpc`],
      ["GRPCRoute", `${ns}/extra`],
    ]);
  });

  test("kinds the API server does not serve are empty and said at info level only", () => {
    const absent = logs.filter((l) => String(l.msg).startsWith("the API server does not serve this kind"));
    expect(absent.map((l) => [l.kind, l.level]).sort()).toEqual([["BackendTLSPolicy", "info"]]);
  });
});
