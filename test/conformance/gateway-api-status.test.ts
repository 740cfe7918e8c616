import { describe, expect, test } from "bun:test";
import type { ObjectStatus } from "../../src/status/types.ts";
import type { Mutation } from "./gateway-api-data.ts";
import { gatewayController, type Placed } from "./gateway-api-manifests.ts";
import { applyMutation } from "./gateway-api-mutations.ts";
import { runStatusCheck, type StatusView } from "./gateway-api-status.ts";

const ns = "gateway-conformance-infra";
const cond = (type: string, status: string, reason: string, observedGeneration = 1) => ({
  type,
  status,
  reason,
  message: "",
  observedGeneration,
});
const gwObject: Placed = {
  file: "a.yaml",
  object: {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "gw", namespace: ns, generation: 1 },
    spec: { listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  },
};
const routeObject: Placed = {
  file: "a.yaml",
  object: {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "r", namespace: ns, generation: 2 },
    spec: { rules: [{ backendRefs: [{ name: "infra-backend-v1" }] }] },
  },
};
const statuses: ObjectStatus[] = [
  {
    target: { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: ns, name: "gw" },
    status: {
      addresses: [{ type: "IPAddress", value: "127.0.1.1" }],
      conditions: [cond("Accepted", "True", "Accepted"), cond("Programmed", "True", "Programmed")],
      listeners: [
        {
          name: "http",
          attachedRoutes: 1,
          supportedKinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
          conditions: ["Accepted", "ResolvedRefs", "Programmed"].map((t) => cond(t, "True", t)),
        },
      ],
    },
  },
  {
    target: { group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: ns, name: "r" },
    status: {
      parents: [
        {
          parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" },
          controllerName: gatewayController,
          conditions: [
            cond("Accepted", "True", "Accepted", 2),
            cond("ResolvedRefs", "True", "ResolvedRefs", 1),
          ],
        },
      ],
    },
  },
];
const view: StatusView = { statuses, objects: [gwObject, routeObject], generationsBefore: new Map() };
const check = (c: Record<string, unknown>) => runStatusCheck(c as { check: string }, view);

describe("status checks", () => {
  test("GatewayAndRoutesAccepted holds, and fails for a route without a parent entry", () => {
    expect(check({ check: "GatewayAndRoutesAccepted", gateway: `${ns}/gw`, routes: [`${ns}/r`] })).toBe("");
    expect(check({ check: "GatewayAndRoutesAccepted", gateway: `${ns}/gw`, routes: [`${ns}/x`] })).toContain(
      "no status parent",
    );
  });

  test("RouteCondition wants the condition and the latest observedGeneration on every condition", () => {
    const c = { check: "RouteCondition", route: `${ns}/r`, parent: `${ns}/gw` };
    // ResolvedRefs is at generation 1 while the route is at 2: stale.
    expect(check({ ...c, condition: { type: "Accepted", status: "True", reason: "Accepted" } })).toContain(
      "not at generation 2",
    );
    expect(check({ ...c, condition: { type: "Accepted", status: "False", reason: "" } })).toContain(
      "no Accepted=False",
    );
  });

  test("GatewayListenersStatus compares count, kinds, attachedRoutes and conditions", () => {
    const listener = {
      name: "http",
      supportedKinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
      conditions: [{ type: "Accepted", status: "True", reason: "" }],
      attachedRoutes: 1,
    };
    const c = { check: "GatewayListenersStatus", gateway: `${ns}/gw` };
    expect(check({ ...c, listeners: [listener] })).toBe("");
    expect(check({ ...c, listeners: [{ ...listener, attachedRoutes: 2 }] })).toContain(
      "attachedRoutes 1, want 2",
    );
    expect(check({ ...c, listeners: [{ ...listener, supportedKinds: [] }] })).toContain("supportedKinds");
    expect(check({ ...c, listeners: [listener, listener] })).toContain("want 2");
  });

  test("NamespacesReady, GatewayZeroRoutes, RouteNoAcceptedParents", () => {
    expect(check({ check: "NamespacesReady", namespaces: [ns] })).toBe("");
    expect(check({ check: "GatewayZeroRoutes", gateway: `${ns}/gw` })).toContain("listeners");
    expect(check({ check: "RouteNoAcceptedParents", route: `${ns}/r` })).toContain("accepted parents");
    expect(check({ check: "RouteNoAcceptedParents", route: `${ns}/none` })).toBe("");
  });
});

describe("mutations", () => {
  test("append and remove listeners, set a path, delete; patches bump generation", () => {
    const add: Mutation = {
      phase: 1,
      op: "patch",
      kind: "Gateway",
      ref: `${ns}/gw`,
      description:
        "append listener {name: alt, port: 80, protocol: HTTP, allowedRoutes.namespaces.from: All}",
    };
    const [gw] = applyMutation([gwObject], add);
    expect(gw?.object.metadata.generation).toBe(2);
    expect(gw?.object.spec?.listeners).toEqual([
      { name: "http", port: 80, protocol: "HTTP" },
      { name: "alt", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } },
    ]);
    expect(gwObject.object.metadata.generation).toBe(1); // the original is untouched
    const removed = applyMutation([gw as Placed], {
      ...add,
      description: "remove listener 'http' (keep only 'alt')",
    });
    const left = (removed[0]?.object.spec?.listeners ?? []) as { name: string }[];
    expect(left.map((l) => l.name)).toEqual(["alt"]);
    const set: Mutation = {
      phase: 1,
      op: "patch",
      kind: "HTTPRoute",
      ref: `${ns}/r`,
      description: "spec.rules[0].backendRefs[0].name = infra-backend-v2",
    };
    expect(JSON.stringify(applyMutation([routeObject], set)[0]?.object.spec)).toContain("infra-backend-v2");
    expect(applyMutation([routeObject], { ...set, op: "delete" })).toEqual([]);
    expect(() => applyMutation([routeObject], { ...set, description: "do something" })).toThrow(
      "not understood",
    );
  });
});
