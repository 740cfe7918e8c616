/**
 * Kept HTTPRoute translations: reused only while the route and everything it read are the same
 * objects. Each step below changes one input and compares translate's result with a translate of
 * cloned objects (which can reuse nothing): they must be equal, so a kept result is never stale.
 */
import { describe, expect, test } from "bun:test";
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import type { EndpointSlice, Service } from "../../../sources/schema/core.ts";
import type { Gateway, GatewayClass, HTTPRoute, ReferenceGrant } from "../../../sources/schema/gateway.ts";
import { emptySnapshot, type ResourceSnapshot } from "../../../sources/snapshot.ts";
import { indexSnapshot } from "../../common/snapshot-index.ts";
import { translate } from "../../translate.ts";
import { translateHTTPRouteKept } from "./memo.ts";

const cls: GatewayClass = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "GatewayClass",
  metadata: { name: "gatehouse" },
  spec: { controllerName: "gatehouse.dev/gateway-controller" },
};
const gw: Gateway = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name: "gw", namespace: "app" },
  spec: {
    gatewayClassName: "gatehouse",
    listeners: [{ name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }],
  },
};
const route: HTTPRoute = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name: "r", namespace: "app" },
  spec: {
    parentRefs: [{ name: "gw" }],
    hostnames: ["a.example"],
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/web" } }],
        backendRefs: [{ name: "web", port: 80 }],
      },
      {
        matches: [{ path: { type: "PathPrefix", value: "/other" } }],
        backendRefs: [{ name: "db", namespace: "data", port: 5000 }],
      },
    ],
  },
};
const service = (ns: string, name: string, port: number, targetPort: number): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: ns },
  spec: { ports: [{ port, targetPort }] },
});
const slice = (ns: string, svc: string, name: string, ips: string[], port: number): EndpointSlice => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace: ns, labels: { "kubernetes.io/service-name": svc } },
  addressType: "IPv4",
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [{ port }],
});
const grant: ReferenceGrant = {
  apiVersion: "gateway.networking.k8s.io/v1beta1",
  kind: "ReferenceGrant",
  metadata: { name: "g", namespace: "data" },
  spec: {
    from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "app" }],
    to: [{ group: "", kind: "Service" }],
  },
};

const opts = { httpPort: 8080, nowMs: 0, gatewayAddressPool: "127.0.1.0/24" };
/** The same snapshot with every object cloned: nothing kept can be reused for it. */
const fresh = (s: ResourceSnapshot) => translate(structuredClone(s), opts);
const same = (s: ResourceSnapshot) => {
  const got = translate(s, opts);
  expect(got).toEqual(fresh(s));
  return got;
};

describe("kept HTTPRoute translations", () => {
  test("a kept result is reused while nothing it read changed, and redone when something did", () => {
    const web = service("app", "web", 80, 8080);
    const db = service("data", "db", 5000, 5432);
    const webSlice = slice("app", "web", "web-1", ["10.0.0.1"], 8080);
    let s: ResourceSnapshot = {
      ...emptySnapshot,
      gatewayClasses: [cls],
      gateways: [gw],
      httpRoutes: [route],
      services: [web, db],
      endpointSlices: [webSlice, slice("data", "db", "db-1", ["10.0.9.1"], 5432)],
    };
    // No grant yet: the cross-namespace backend is refused.
    const before = same(s);
    const index = indexSnapshot(s);
    const first = translateHTTPRouteKept(route, index, []);
    expect(translateHTTPRouteKept(route, indexSnapshot({ ...s }), [])).toBe(first);
    // A Service it does not use changes: still reused.
    s = { ...s, services: [web, db, service("app", "unrelated", 1, 1)] };
    expect(translateHTTPRouteKept(route, indexSnapshot(s), [])).toBe(first);
    same(s);
    // Its endpoints change: redone, and the model has the new endpoint.
    s = {
      ...s,
      endpointSlices: [slice("app", "web", "web-1", ["10.0.0.2"], 8080), ...s.endpointSlices.slice(1)],
    };
    expect(translateHTTPRouteKept(route, indexSnapshot(s), [])).not.toBe(first);
    const moved = same(s);
    expect(JSON.stringify(moved.model)).toContain("10.0.0.2");
    expect(JSON.stringify(moved.model)).not.toContain("10.0.0.1");
    // Its Service's target port changes: redone.
    s = { ...s, services: [service("app", "web", 80, 9090), db] };
    same(s);
    // A ReferenceGrant appears: the other rule's backend resolves now.
    s = { ...s, referenceGrants: [grant] };
    const granted = same(s);
    expect(JSON.stringify(granted.model)).toContain("10.0.9.1");
    expect(JSON.stringify(before.model)).not.toContain("10.0.9.1");
    // And goes again.
    s = { ...s, referenceGrants: [] };
    expect(JSON.stringify(same(s).model)).not.toContain("10.0.9.1");
    // A new route object (an edited route) is translated afresh.
    const edited = structuredClone(route);
    (edited.spec?.rules?.[0]?.matches?.[0]?.path as { value: string }).value = "/moved";
    s = { ...s, httpRoutes: [edited] };
    expect(JSON.stringify(same(s).model)).toContain("/moved");
  });

  test("an https port is refused until a BackendTLSPolicy targets it, and again when it goes", () => {
    const https: Service = {
      ...service("app", "web", 80, 8080),
      spec: { ports: [{ name: "https", port: 80, targetPort: 8080, appProtocol: "https" }] },
    };
    const policy: BackendTLSPolicy = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "BackendTLSPolicy",
      metadata: { name: "web", namespace: "app" },
      spec: {
        targetRefs: [{ group: "", kind: "Service", name: "web", sectionName: "https" }],
        validation: { wellKnownCACertificates: "System", hostname: "web.example.com" },
      },
    };
    let s: ResourceSnapshot = {
      ...emptySnapshot,
      gatewayClasses: [cls],
      gateways: [gw],
      httpRoutes: [route],
      services: [https],
      endpointSlices: [slice("app", "web", "web-1", ["10.0.0.1"], 8080)],
    };
    const refused = (r: ReturnType<typeof same>) =>
      JSON.stringify(r.statuses).includes("UnsupportedProtocol");
    expect(refused(same(s))).toBe(true);
    const first = translateHTTPRouteKept(route, indexSnapshot(s), []);
    s = { ...s, backendTLSPolicies: [policy] };
    expect(translateHTTPRouteKept(route, indexSnapshot(s), [])).not.toBe(first);
    const served = same(s);
    expect(refused(served)).toBe(false);
    expect(Object.keys(served.model.backends)).toContain("app/web:80/tls");
    s = { ...s, backendTLSPolicies: [] };
    expect(refused(same(s))).toBe(true);
  });
});
