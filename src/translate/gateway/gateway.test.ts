import { describe, expect, test } from "bun:test";
import { dumpTranslateResult } from "../../model/dump.ts";
import type { Service } from "../../sources/schema/core.ts";
import type { Gateway, GatewayClass, HTTPRoute } from "../../sources/schema/gateway.ts";
import { emptySnapshot, type ResourceSnapshot } from "../../sources/snapshot.ts";
import { translate } from "../translate.ts";

const cls: GatewayClass = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "GatewayClass",
  metadata: { name: "gatehouse" },
  spec: { controllerName: "gatehouse.dev/gateway-controller" },
};
const gw = (name: string): Gateway => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name, namespace: "ns", generation: 3 },
  spec: { gatewayClassName: "gatehouse", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
});
const route = (name: string, path: string): HTTPRoute => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: "ns" },
  spec: {
    parentRefs: [{ name: "a" }, { name: "b" }],
    rules: [
      { matches: [{ path: { type: "PathPrefix", value: path } }], backendRefs: [{ name: "web", port: 80 }] },
    ],
  },
});
const web: Service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "ns" },
  spec: { ports: [{ port: 80 }] },
};
const snapshot: ResourceSnapshot = {
  ...emptySnapshot,
  gatewayClasses: [cls],
  gateways: [gw("a"), gw("b")],
  httpRoutes: [route("r1", "/one"), route("r2", "/two"), route("r3", "/")],
  services: [web],
};
const options = { gatewayAddressPool: "127.0.1.0/24" };

describe("translate with Gateway API objects", () => {
  test("output does not depend on input order", () => {
    const expected = dumpTranslateResult(translate(snapshot, options));
    const reversed = {
      ...snapshot,
      gateways: [...snapshot.gateways].reverse(),
      httpRoutes: [...snapshot.httpRoutes].reverse(),
    };
    expect(dumpTranslateResult(translate(reversed, options))).toBe(expected);
  });

  test("statuses: class, both Gateways, every route, with observedGeneration", () => {
    const { statuses, model } = translate(snapshot, options);
    expect(statuses.map((s) => `${s.target.kind}/${s.target.name}`)).toEqual([
      "GatewayClass/gatehouse",
      "Gateway/a",
      "Gateway/b",
      "HTTPRoute/r1",
      "HTTPRoute/r2",
      "HTTPRoute/r3",
    ]);
    const a = statuses[1]?.status as {
      conditions: { observedGeneration?: number }[];
      listeners: { attachedRoutes: number }[];
    };
    expect(a.conditions.every((c) => c.observedGeneration === 3)).toBe(true);
    expect(a.listeners[0]?.attachedRoutes).toBe(3);
    const addresses = model.listeners.slice(1).map((l) => l.address);
    expect(new Set(addresses).size).toBe(2);
  });

  test("malformed objects cost only themselves", () => {
    const broken = {
      ...snapshot,
      gateways: [
        ...snapshot.gateways,
        {
          metadata: { name: "junk", namespace: "ns" },
          spec: { gatewayClassName: "gatehouse", listeners: [null] },
        } as unknown as Gateway,
      ],
      httpRoutes: [
        ...snapshot.httpRoutes,
        {
          metadata: { name: "junk", namespace: "ns" },
          spec: { parentRefs: [{ name: "a" }], rules: [null] },
        } as unknown as HTTPRoute,
      ],
    };
    const result = translate(broken, options);
    expect(
      result.problems
        .filter((p) => p.reason === "InternalError")
        .map((p) => `${p.object.kind}/${p.object.name}`)
        .sort(),
    ).toEqual(["Gateway/junk", "HTTPRoute/junk"]);
    expect(result.statuses.filter((s) => s.target.kind === "HTTPRoute")).toHaveLength(3);
  });
});
