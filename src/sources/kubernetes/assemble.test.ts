import { expect, test } from "bun:test";
import { assembleSnapshot, type ParseCache, referencedConfigMaps, referencedSecrets } from "./assemble.ts";

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
  GRPCRoute: [],
  TLSRoute: [],
  ListenerSet: [],
  TCPRoute: [],
  UDPRoute: [],
  ReferenceGrant: [],
  BackendTLSPolicy: [],
  AuthPolicy: [],
  RateLimitPolicy: [],
  BackendTrafficPolicy: [],
  ScaleToZeroPolicy: [],
  WAFPolicy: [],
  HTTPRouteFilter: [],
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

test("a refused BackendTLSPolicy is reported and served as a stand-in naming its targets (closed, not cleartext)", () => {
  const typo = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    metadata: { name: "p", namespace: "n", creationTimestamp: "2026-01-01T00:00:00Z", uid: "u1" },
    spec: { targetRef: { kind: "Service", name: "secure" }, validation: { hostname: "a.example" } },
  };
  const nothing = { ...typo, metadata: { name: "q", namespace: "n" }, spec: {} };
  const { snapshot, invalid } = assembleSnapshot(
    { ...empty, BackendTLSPolicy: [typo, nothing] },
    () => true,
    new Map(),
  );
  expect(invalid.map((i) => i.name)).toEqual(["n/p", "n/q"]);
  // Only the one with a readable target stands in; it has no validation, so translation judges it Invalid.
  expect(snapshot.backendTLSPolicies).toEqual([
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "BackendTLSPolicy",
      metadata: {
        name: "p",
        namespace: "n",
        creationTimestamp: "2026-01-01T00:00:00Z",
        uid: "u1",
        annotations: { "gatehouse.dev/refused-by-schema": expect.stringContaining("spec.targetRefs") },
      },
      spec: { targetRefs: [{ group: "", kind: "Service", name: "secure" }] },
    },
  ]);
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

test("client CA references of spec.tls.frontend: ConfigMaps and Secrets, default and per port", () => {
  const validation = (caCertificateRefs: unknown) => ({ validation: { caCertificateRefs } });
  const gw = {
    metadata: { name: "g", namespace: "n" },
    spec: {
      listeners: [],
      tls: {
        frontend: {
          default: validation([{ group: "", kind: "ConfigMap", name: "ca" }]),
          perPort: [
            { port: 8443, tls: validation([{ kind: "Secret", name: "ca-secret", namespace: "o" }]) },
            { port: 9443, tls: validation([{ kind: "Service", name: "web" }, { kind: "ConfigMap" }]) },
            { port: 7443, tls: {} },
          ],
        },
      },
    },
  };
  expect([...referencedConfigMaps([], [gw])]).toEqual(["n/ca"]);
  expect([...referencedSecrets({ gateways: [gw] as never, ingresses: [] })]).toEqual(["o/ca-secret"]);
});

test("referencedConfigMaps: the --error-pages-configmap one is kept although nothing names it", () => {
  expect([...referencedConfigMaps([], [], [], ["ops/errors"])]).toEqual(["ops/errors"]);
  expect([...referencedConfigMaps([], [], [])]).toEqual([]);
});

test("referencedSecrets: an Ingress's auth-tls-secret, in its own namespace only", () => {
  const ing = (name: string, value: string) => ({
    metadata: {
      name,
      namespace: "shop",
      annotations: { "nginx.ingress.kubernetes.io/auth-tls-secret": value },
    },
    spec: {},
  });
  const refs = referencedSecrets({
    gateways: [],
    ingresses: [
      ing("a", "shop/client-ca"),
      ing("b", "/other-ca"),
      ing("c", "kube-system/ca"),
      ing("d", "bare"),
    ] as never,
  });
  expect([...refs].sort()).toEqual(["shop/client-ca", "shop/other-ca"]);
});

test("referencedSecrets: the --default-certificate Secret is always referenced", () => {
  const refs = referencedSecrets({ gateways: [], ingresses: [] }, ["gatehouse-system/default-tls"]);
  expect([...refs]).toEqual(["gatehouse-system/default-tls"]);
});

test("referencedSecrets: an Ingress's auth-secret (its namespace only) and an AuthPolicy's API-key Secrets", () => {
  const ing = (name: string, value: string) => ({
    metadata: { name, namespace: "n", annotations: { "nginx.ingress.kubernetes.io/auth-secret": value } },
  });
  const policy = {
    metadata: { namespace: "p" },
    spec: {
      apiKeyAuth: { credentialRefs: [{ name: "k1" }, { name: "k2" }] },
      basicAuth: { secretRef: { name: "u" } },
    },
  };
  const refs = referencedSecrets({
    gateways: [],
    ingresses: [ing("a", "users"), ing("b", "n/more"), ing("c", "other/theirs")] as never,
    authPolicies: [policy],
  });
  expect([...refs].sort()).toEqual(["n/more", "n/users", "p/k1", "p/k2", "p/u"]);
});

test("referencedSecrets: an Ingress's proxy-ssl-secret, in its own namespace only", () => {
  const ingress = (name: string, value: string) => ({
    metadata: {
      name,
      namespace: "n",
      annotations: { "nginx.ingress.kubernetes.io/proxy-ssl-secret": value },
    },
  });
  const refs = referencedSecrets({
    gateways: [],
    ingresses: [ingress("a", "n/backend-ca"), ingress("b", "other/ca"), ingress("c", "bare")] as never,
  });
  expect([...refs]).toEqual(["n/backend-ca"]);
});
