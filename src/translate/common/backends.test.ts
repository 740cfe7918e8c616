import { describe, expect, test } from "bun:test";
import type { EndpointSlice, Service } from "../../sources/schema/core.ts";
import { emptySnapshot } from "../../sources/snapshot.ts";
import { lookupServiceBackend, protocolOf } from "./backends.ts";
import { indexSnapshot } from "./snapshot-index.ts";

const service = (name: string, spec: Service["spec"]): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "ns" },
  spec,
});

const slice = (svc: string, address: string, port: number, name = "http"): EndpointSlice => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: `${svc}-x`, namespace: "ns", labels: { "kubernetes.io/service-name": svc } },
  addressType: "IPv4",
  endpoints: [{ addresses: [address] }],
  ports: [{ name, port }],
});

const index = indexSnapshot({
  ...emptySnapshot,
  services: [
    service("web", {
      ports: [{ name: "http", port: 80, targetPort: 8080, appProtocol: "kubernetes.io/h2c" }],
    }),
    service("ext", { type: "ExternalName", externalName: "x.example", ports: [{ port: 80 }] }),
    service("idle", { ports: [{ name: "http", port: 80 }] }),
  ],
  endpointSlices: [slice("web", "10.0.0.1", 8080), slice("elsewhere", "10.0.0.2", 8080)],
});

describe("lookupServiceBackend", () => {
  test("by number and by name give the same backend, with endpoints and protocol", () => {
    const byNumber = lookupServiceBackend(index, "ns", "web", { number: 80 });
    const byName = lookupServiceBackend(index, "ns", "web", { name: "http" });
    expect(byName).toEqual(byNumber);
    expect(byNumber.issue).toBeUndefined();
    expect(byNumber.backend).toEqual({
      id: "ns/web:80",
      service: { namespace: "ns", name: "web", port: 80 },
      protocol: "h2c",
      endpoints: [{ address: "10.0.0.1", port: 8080 }],
    });
  });

  test("unknown Service: ServiceNotFound backend and a BackendNotFound issue", () => {
    const r = lookupServiceBackend(index, "other", "web", { name: "http" });
    expect(r.backend).toMatchObject({ id: "other/web:http", endpoints: [], problem: "ServiceNotFound" });
    expect(r.issue).toEqual({
      reason: "BackendNotFound",
      subject: "service",
      message: "Service other/web not found",
    });
  });

  test("ExternalName is refused", () => {
    const r = lookupServiceBackend(index, "ns", "ext", { number: 80 });
    expect(r.backend.problem).toBe("ServiceNotFound");
    expect(r.issue?.reason).toBe("UnsupportedBackend");
  });

  test("missing port: PortNotFound, by name and by number", () => {
    const byName = lookupServiceBackend(index, "ns", "web", { name: "grpc" });
    expect(byName.backend).toMatchObject({ id: "ns/web:grpc", problem: "PortNotFound" });
    expect(byName.issue).toMatchObject({ reason: "PortNotFound", subject: "port" });
    expect(lookupServiceBackend(index, "ns", "web", { number: 81 }).backend.problem).toBe("PortNotFound");
  });

  test("a Service without endpoints is NoReadyEndpoints with no issue", () => {
    const r = lookupServiceBackend(index, "ns", "idle", { number: 80 });
    expect(r.backend).toMatchObject({ endpoints: [], problem: "NoReadyEndpoints" });
    expect(r.issue).toBeUndefined();
  });
});

test("protocolOf maps the Kubernetes appProtocol values", () => {
  expect(protocolOf("kubernetes.io/h2c")).toBe("h2c");
  expect(protocolOf("kubernetes.io/ws")).toBe("websocket");
  expect(protocolOf("kubernetes.io/wss")).toBe("websocket");
  expect(protocolOf("https")).toBe("http");
  expect(protocolOf(undefined)).toBe("http");
});
