import { expect, test } from "bun:test";
import { infrastructureOf } from "../../translate/gateway/infrastructure.ts";
import type { Gateway } from "../schema/gateway.ts";
import type { KubeClient } from "./client.ts";
import { desiredServices, GatewayServices } from "./gateway-services.ts";
import type { RawObject } from "./informer.ts";

const gateway = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name: "edge", namespace: "apps" },
  spec: {
    gatewayClassName: "gatehouse",
    infrastructure: { labels: { team: "a" }, annotations: { owner: "b" } },
    listeners: [
      { name: "web", port: 80, protocol: "HTTP" },
      { name: "dns-udp", port: 53, protocol: "UDP" },
      { name: "dns-tcp", port: 53, protocol: "TCP" },
      { name: "web2", port: 80, protocol: "HTTP", hostname: "b.example" },
    ],
  },
} as unknown as Gateway;

test("a Gateway's Service: a UDP port for UDP listeners, TCP for the others, each once; the spec's label", () => {
  const [svc] = desiredServices(
    [gateway],
    { namespace: "gatehouse", selector: { app: "gw" } },
    "ClusterIP",
    10000,
    () => undefined,
  );
  const spec = svc?.spec as { ports: unknown[] };
  expect(spec.ports).toEqual([
    { name: "p53", protocol: "TCP", port: 53, targetPort: 10053 },
    { name: "u53", protocol: "UDP", port: 53, targetPort: 10053 },
    { name: "p80", protocol: "TCP", port: 80, targetPort: 10080 },
  ]);
  const meta = svc?.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
  expect(meta.labels).toMatchObject({ team: "a", "gateway.networking.k8s.io/gateway-name": "edge" });
  expect(meta.annotations).toMatchObject({ owner: "b" });
});

test("the Service carries the Gateway's infrastructure record: the spec's entries, ours, nothing refused", () => {
  const spoofed = {
    ...gateway,
    spec: {
      ...gateway.spec,
      infrastructure: {
        labels: { team: "a", "gatehouse.dev/gateway-name": "spoof", "bad key": "x" },
        annotations: { owner: "b", "gatehouse.dev/infrastructure-annotations": "forged" },
      },
    },
  } as Gateway;
  const [svc] = desiredServices(
    [spoofed],
    { namespace: "gatehouse", selector: { app: "gw" } },
    "LoadBalancer",
    0,
    () => undefined,
  );
  const meta = svc?.metadata as { labels: Record<string, string>; annotations: Record<string, string> };
  const record = infrastructureOf(spoofed).metadata;
  expect(meta.labels).toEqual({ ...record.labels });
  expect(meta.labels).toEqual({
    "app.kubernetes.io/managed-by": "gatehouse",
    "gatehouse.dev/gateway-name": "edge",
    "gatehouse.dev/gateway-namespace": "apps",
    "gateway.networking.k8s.io/gateway-name": "edge",
    team: "a",
  });
  // The record's annotations, plus the list of their keys (so a dropped one can be removed later).
  expect(meta.annotations).toEqual({ owner: "b", "gatehouse.dev/infrastructure-annotations": "owner" });
});

test("a Service the API server completed (node ports, default protocol) is not rewritten; a changed one keeps its node ports", async () => {
  const fleet = { namespace: "gatehouse", selector: { app: "gw" } };
  const [want] = desiredServices([gateway], fleet, "LoadBalancer", 10000, () => undefined);
  const wantSpec = want?.spec as { ports: Record<string, unknown>[] };
  // As the API server returns it: node ports allocated, a clusterIP, defaults filled in.
  const have = {
    ...want,
    metadata: { ...want?.metadata, resourceVersion: "7" },
    spec: {
      ...wantSpec,
      clusterIP: "10.0.0.9",
      ports: wantSpec.ports.map((p, i) => ({ ...p, nodePort: 30000 + i })),
    },
  } as RawObject;
  const calls: { method: string; body: unknown }[] = [];
  const client = {
    request: async (method: string, _path: string, opts: { body?: unknown }) => {
      calls.push({ method, body: opts.body });
      return { status: 200 };
    },
  } as unknown as KubeClient;
  const services = new GatewayServices(
    client,
    () => [have],
    () => true,
  );
  services.update([want as RawObject]);
  await services.stop();
  expect(calls).toEqual([]);

  const grown = {
    ...gateway,
    spec: {
      ...gateway.spec,
      listeners: [...(gateway.spec?.listeners ?? []), { name: "tls", port: 443, protocol: "HTTPS" }],
    },
  } as Gateway;
  const [changed] = desiredServices([grown], fleet, "LoadBalancer", 10000, () => undefined);
  const again = new GatewayServices(
    client,
    () => [have],
    () => true,
  );
  again.update([changed as RawObject]);
  await again.stop();
  expect(calls.map((c) => c.method)).toEqual(["PUT"]);
  const put = calls[0]?.body as { spec: { clusterIP: string; ports: { name: string; nodePort?: number }[] } };
  expect(put.spec.clusterIP).toBe("10.0.0.9");
  expect(put.spec.ports.map((p) => [p.name, p.nodePort])).toEqual([
    ["p53", 30000],
    ["u53", 30001],
    ["p80", 30002],
    ["p443", undefined],
  ]);
});
