import { expect, test } from "bun:test";
import { assembleSnapshot, type ParseCache, referencedSecrets } from "./assemble.ts";

const secret = (name: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "n", resourceVersion: "1" },
  data: {},
});
const empty = {
  IngressClass: [],
  Ingress: [],
  Service: [],
  EndpointSlice: [],
  Secret: [],
  ConfigMap: [],
  Namespace: [],
  GatewayClass: [],
  Gateway: [],
  HTTPRoute: [],
  TLSRoute: [],
  ReferenceGrant: [],
  AuthPolicy: [],
  RateLimitPolicy: [],
};

test("invalid objects are returned for reporting and left out; valid ones go to their field", () => {
  const good = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "s", namespace: "n" },
    spec: { ports: [{ port: 80 }] },
  };
  const bad = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "b", namespace: "n" },
    spec: { ports: [{ port: 0 }] },
  };
  const cache: ParseCache = new Map();
  const { snapshot, invalid } = assembleSnapshot({ ...empty, Service: [good, bad] }, () => true, cache);
  expect(snapshot.services.map((s) => s.metadata.name)).toEqual(["s"]);
  expect(invalid).toEqual([
    { kind: "Service", name: "n/b", reason: expect.stringContaining("spec.ports[0].port"), object: bad },
  ]);
  assembleSnapshot({ ...empty, Service: [good] }, () => true, cache);
  expect(cache.size).toBe(1); // pruned to what is still there
});

test("Secrets are kept only when keepSecret says so", () => {
  const { snapshot } = assembleSnapshot(
    { ...empty, Secret: [secret("a"), secret("b")] },
    (_ns, name) => name === "b",
    new Map(),
  );
  expect(snapshot.secrets.map((s) => s.metadata.name)).toEqual(["b"]);
});

test("referencedSecrets: listener certificateRefs, Ingress TLS and policy secretRefs", () => {
  const refs = referencedSecrets({
    gateways: [
      {
        metadata: { name: "g", namespace: "n" },
        spec: {
          listeners: [
            {
              tls: {
                certificateRefs: [
                  { name: "c1" },
                  { name: "c2", namespace: "o" },
                  { name: "x", kind: "ConfigMap" },
                ],
              },
            },
          ],
        },
      },
    ] as never,
    ingresses: [{ metadata: { name: "i", namespace: "n" }, spec: { tls: [{ secretName: "t" }] } }] as never,
    authPolicies: [
      {
        metadata: { namespace: "p" },
        spec: { providers: [{ keys: { type: "Secret", secretRef: { name: "k" } } }] },
      },
    ],
  });
  expect([...refs].sort()).toEqual(["n/c1", "n/t", "o/c2", "p/k"]);
});

test("referencedSecrets: a Gateway's backend client certificate (judged for ResolvedRefs)", () => {
  const gw = (clientCertificateRef: unknown) => ({
    metadata: { name: "g", namespace: "n" },
    spec: { listeners: [], tls: { backend: { clientCertificateRef } } },
  });
  const refs = referencedSecrets({
    gateways: [
      gw({ name: "client" }),
      gw({ name: "other", namespace: "o" }),
      gw({ name: "x", kind: "Foo" }),
    ] as never,
    ingresses: [],
  });
  expect([...refs].sort()).toEqual(["n/client", "o/other"]);
});

test("referencedSecrets: the --default-certificate Secret is always referenced", () => {
  const refs = referencedSecrets({ gateways: [], ingresses: [] }, ["gatehouse-system/default-tls"]);
  expect([...refs]).toEqual(["gatehouse-system/default-tls"]);
});
