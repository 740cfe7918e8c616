import { expect, test } from "bun:test";
import { dumpModel } from "../../model/dump.ts";
import { emptySnapshot, type ResourceSnapshot } from "../../sources/snapshot.ts";
import { translate } from "../translate.ts";

const ingress = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "app", namespace: "default" },
  spec: {
    ingressClassName: "gatehouse",
    rules: [
      {
        http: {
          paths: [
            { path: "/", pathType: "Prefix", backend: { service: { name: "s", port: { number: 80 } } } },
          ],
        },
      },
    ],
  },
};
const target = { group: "networking.k8s.io", kind: "Ingress", name: "app" };
const policy = (name: string, spec: unknown) => ({
  apiVersion: "gatehouse.dev/v1alpha1",
  kind: "AuthPolicy",
  metadata: { name, namespace: "default" },
  spec,
});
const snapshot = (authPolicies: unknown[], secrets: unknown[] = []) =>
  ({ ...emptySnapshot, ingresses: [ingress], authPolicies, secrets }) as unknown as ResourceSnapshot;
const routeAuth = (s: ResourceSnapshot) => translate(s).model.listeners[0]?.virtualHosts[0]?.routes[0]?.auth;

test("garbage policies never throw; a policy with a broken spec still fails its routes closed", () => {
  const s = snapshot([null, policy("x", null), policy("y", { targetRefs: [null, target], jwt: 5 })]);
  expect(() => translate(s)).not.toThrow();
  expect(routeAuth(s)?.failClosed).toContain("spec.jwt");
});

test("OIDC client secret and session key are redacted in dumps", () => {
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "o", namespace: "default" },
    stringData: { "client-secret": "hunter2-client", "session-key": "0123456789abcdef0123456789abcdef" },
  };
  const spec = {
    targetRefs: [target],
    oidc: {
      issuer: "https://id.example.com",
      clientID: "c",
      clientSecretRef: { name: "o" },
      sessionKeyRef: { name: "o" },
      redirectURL: "https://app.example.com/cb",
    },
  };
  const s = snapshot([policy("p", spec)], [secret]);
  const auth = routeAuth(s);
  expect(auth?.failClosed).toBeUndefined();
  expect(auth?.oidc?.clientSecret).toBe("hunter2-client");
  const dump = dumpModel(translate(s).model);
  expect(dump).not.toContain("hunter2");
  expect(dump).not.toContain(Buffer.from("0123456789abcdef0123456789abcdef").toString("base64"));
  expect(dump).toContain("clientSecret: <redacted>");
});

test("credentials written into a key URL reach no status message, problem or model dump", () => {
  const spec = {
    targetRefs: [target],
    jwt: {
      providers: [
        {
          name: "p",
          issuer: "https://id.example.com",
          audiences: ["a"],
          keys: { type: "RemoteJWKS", uri: "https://admin:hunter2@keys.example.com/jwks" },
        },
      ],
    },
  };
  const s = snapshot([policy("leaky", spec)]);
  const out = translate(s);
  const everything = JSON.stringify([out.problems, out.statuses]) + dumpModel(out.model);
  expect(routeAuth(s)?.failClosed).toContain("must not carry credentials");
  expect(everything).toContain("<redacted>@keys.example.com");
  expect(everything).not.toContain("hunter2");
  expect(everything).not.toContain("admin:");
});

test("a policy whose build throws still holds its routes closed, and says why", () => {
  const spec = {
    targetRefs: [target],
    get jwt(): unknown {
      throw new Error("boom");
    },
  };
  const s = snapshot([policy("thrower", spec)]);
  const out = translate(s);
  const auth = out.model.listeners[0]?.virtualHosts[0]?.routes[0]?.auth;
  expect(auth?.policy.name).toBe("thrower");
  expect(auth?.failClosed).toContain("could not be built");
  const status = out.statuses.find((st) => st.target.name === "thrower");
  expect(JSON.stringify(status?.status)).toContain("could not be built");
  expect(JSON.stringify(status?.status)).not.toContain("boom"); // the error may quote a Secret: log only
  expect(out.problems.some((p) => p.message.includes("boom"))).toBe(true);
});

const gatewayTarget = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" };
const routeTarget = { group: "gateway.networking.k8s.io", kind: "HTTPRoute", name: "admin" };
const gatewaySnapshot = (authPolicies: unknown[]) =>
  ({
    ...emptySnapshot,
    gatewayClasses: [
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "GatewayClass",
        metadata: { name: "gatehouse" },
        spec: { controllerName: "gatehouse.dev/gateway-controller" },
      },
    ],
    gateways: [
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: "gw", namespace: "default" },
        spec: { gatewayClassName: "gatehouse", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
      },
    ],
    httpRoutes: [
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "admin", namespace: "default" },
        spec: {
          parentRefs: [{ name: "gw" }],
          hostnames: ["admin.example.com"],
          rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
        },
      },
    ],
    authPolicies,
  }) as unknown as ResourceSnapshot;
const adminRoute = (s: ResourceSnapshot) =>
  translate(s, { gatewayAddressPool: "127.0.1.0/24" })
    .model.listeners.flatMap((l) => l.virtualHosts)
    .flatMap((vh) => vh.routes)
    .find((r) => r.source.name === "admin");
const jwt = {
  providers: [{ name: "x", issuer: "https://id.example.com", audiences: ["x"], keys: { type: "Discovery" } }],
};

test("a route policy of address lists only keeps the Gateway policy's authentication (never open)", () => {
  const s = gatewaySnapshot([
    policy("gw-jwt", { targetRefs: [gatewayTarget], jwt, ipDenyList: ["203.0.113.0/24"] }),
    policy("admin-office", { targetRefs: [routeTarget], ipAllowList: ["10.0.0.0/8"] }),
  ]);
  const route = adminRoute(s);
  expect(route?.auth?.policy.name).toBe("gw-jwt");
  expect(route?.auth?.jwt?.providers[0]?.issuer).toBe("https://id.example.com");
  expect(route?.auth?.failClosed).toBeUndefined();
  expect(route?.ipAccess?.map((l) => [l.source.name, l.allow, l.deny])).toEqual([
    ["admin-office", ["10.0.0.0/8"], []],
    ["gw-jwt", [], ["203.0.113.0/24"]],
  ]);
  // A route policy that authenticates still replaces the Gateway's method.
  const own = adminRoute(
    gatewaySnapshot([
      policy("gw-jwt", { targetRefs: [gatewayTarget], jwt }),
      policy("admin-jwt", {
        targetRefs: [routeTarget],
        jwt: { ...jwt, providers: [{ ...jwt.providers[0], issuer: "https://other.example.com" }] },
      }),
    ]),
  );
  expect(own?.auth?.policy.name).toBe("admin-jwt");
});

test("an invalid Gateway policy's address lists refuse everyone on routes with their own policy", () => {
  const s = gatewaySnapshot([
    policy("gw-deny", { targetRefs: [gatewayTarget], ipDenyList: ["203.0.113.0/24", "10.0.0.0/33"] }),
    policy("admin-office", { targetRefs: [routeTarget], ipAllowList: ["10.0.0.0/8"] }),
  ]);
  const route = adminRoute(s);
  const refused = route?.ipAccess?.find((l) => l.source.name === "gw-deny");
  expect(refused?.invalid).toContain("10.0.0.0/33");
  // Lists only on both levels: the invalid Gateway policy is the authentication too (401).
  expect(route?.auth?.failClosed).toContain("10.0.0.0/33");
  // An invalid Gateway policy with no lists adds none where the route authenticates itself.
  const noLists = adminRoute(
    gatewaySnapshot([
      policy("gw-bad", { targetRefs: [gatewayTarget], jwt: 5 }),
      policy("admin-jwt", { targetRefs: [routeTarget], jwt }),
    ]),
  );
  expect(noLists?.ipAccess).toBeUndefined();
  expect(noLists?.auth?.policy.name).toBe("admin-jwt");
  expect(noLists?.auth?.failClosed).toBeUndefined();
});
