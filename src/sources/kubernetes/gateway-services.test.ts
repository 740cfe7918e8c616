import { expect, test } from "bun:test";
import type { Gateway } from "../schema/gateway.ts";
import { desiredServices } from "./gateway-services.ts";

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
