import { afterAll, describe, expect, test } from "bun:test";
import type { K8sObject } from "../gateway-api-manifests.ts";
import { makeCertificates } from "./certificates.ts";
import type { RestServiceData } from "./data.ts";
import { startRestFleet } from "./fleet.ts";

const ns = "gateway-conformance-infra";
const svc = (name: string, app: string, over: Partial<RestServiceData>): RestServiceData => ({
  ref: `${ns}/${name}`,
  selectorApp: app,
  podNamePrefix: app,
  referencedByIncludedTests: true,
  ports: [{ port: 8080, targetPort: 3000 }],
  ...over,
});
const service = (name: string, app: string, ports: Record<string, unknown>[]): K8sObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: ns },
  spec: { selector: { app }, ports },
});

describe("the rest echo fleet", async () => {
  const certs = await makeCertificates([
    {
      ref: `${ns}/server`,
      kind: "Secret",
      issuer: "self",
      subject: { CN: "default" },
      serialNumber: "random 128-bit",
      isCA: false,
      keyUsage: ["KeyEncipherment", "DigitalSignature"],
      extKeyUsage: ["ServerAuth"],
      creationOrder: 1,
    },
  ]);
  const fleet = await startRestFleet(
    [
      svc("tls-backend", "tls-backend", {
        echoMode: "http",
        tlsServerCertificate: `${ns}/server`,
        ports: [{ port: 443, targetPort: 8443 }],
      }),
      svc("grpc", "grpc-v1", { echoMode: "grpc" }),
      svc("udp", "udp-v1", { echoMode: "udp", ports: [{ port: 8080, targetPort: 8080, protocol: "UDP" }] }),
      svc("coredns", "udp", { echoMode: "coredns", ports: [{ port: 53, targetPort: 53, protocol: "UDP" }] }),
      svc("nowhere", "nowhere", { referencedByIncludedTests: false }),
    ],
    certs,
  );
  afterAll(() => fleet.stop());

  test("one pod per referenced Deployment, named <deployment>-<x>-<y>", () => {
    expect([...fleet.pods.keys()].sort()).toEqual([
      `${ns}/grpc-v1`,
      `${ns}/tls-backend`,
      `${ns}/udp`,
      `${ns}/udp-v1`,
    ]);
    expect(fleet.pods.get(`${ns}/grpc-v1`)?.pod).toBe("grpc-v1-local-0");
  });

  test("each Service's target ports point at the pod's servers, UDP as UDP", () => {
    const out = fleet.withEndpoints([
      {
        file: "t",
        object: service("tls-backend", "tls-backend", [{ name: "https", port: 443, targetPort: 8443 }]),
      },
      {
        file: "t",
        object: service("dns", "udp", [{ name: "dns", port: 53, targetPort: 53, protocol: "UDP" }]),
      },
      { file: "t", object: service("plain", "tls-backend", [{ name: "http", port: 80, targetPort: 3000 }]) },
    ]);
    const slices = out.filter((p) => p.object.kind === "EndpointSlice").map((p) => p.object);
    const ports = (name: string) =>
      slices.find((s) => s.metadata.labels?.["kubernetes.io/service-name"] === name)?.ports as {
        name: string;
        port: number;
        protocol: string;
      }[];
    const tls = fleet.pods.get(`${ns}/tls-backend`)?.ports.get(8443)?.port;
    expect(ports("tls-backend")).toEqual([{ name: "https", port: tls as number, protocol: "TCP" }]);
    expect(ports("dns")?.[0]?.protocol).toBe("UDP");
    // The http pod serves its plain port too, as upstream's echo-basic always does.
    expect(ports("plain")).toHaveLength(1);
  });

  test("a Service no pod serves gets no slice", () => {
    const out = fleet.withEndpoints([{ file: "t", object: service("nowhere", "nowhere", [{ port: 80 }]) }]);
    expect(out).toHaveLength(1);
  });
});
