import { describe, expect, test } from "bun:test";
import type { Listener, Route } from "../../model/index.ts";
import {
  type AttachablePolicy,
  attachPolicies,
  mapPlacedRoutes,
  type PolicyTargets,
} from "./policy-attachment.ts";

const gw = "gateway.networking.k8s.io";
const targets: PolicyTargets = {
  gateways: new Map([["ns/gw", new Set(["http", "alt"])]]),
  httpRoutes: new Map([["ns/web", new Set(["admin"])]]),
  ingresses: new Set(["ns/ing"]),
};
const policy = (name: string, createdMs: number | undefined, ...refs: AttachablePolicy["targetRefs"]) => ({
  ref: { kind: "P", namespace: "ns", name },
  order: { namespace: "ns", name, createdMs },
  targetRefs: refs,
});
const listener = (section: string): Listener => ({
  name: `gateway/ns/gw/${section}`,
  address: "",
  port: 80,
  protocol: "HTTP",
  source: { kind: "Gateway", namespace: "ns", name: "gw" },
  virtualHosts: [],
});
const route = (ruleName?: string): Route => ({
  name: "r",
  source: { kind: "HTTPRoute", namespace: "ns", name: "web" },
  ...(ruleName ? { ruleName } : {}),
  match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
  filters: [],
  action: { kind: "DirectResponse", status: 200 },
});

describe("attachPolicies", () => {
  test("most specific target wins: rule > route > listener > gateway", () => {
    const all = [
      policy("g", 1, { group: gw, kind: "Gateway", name: "gw" }),
      policy("l", 2, { group: gw, kind: "Gateway", name: "gw", sectionName: "http" }),
      policy("r", 3, { group: gw, kind: "HTTPRoute", name: "web" }),
      policy("rule", 4, { group: gw, kind: "HTTPRoute", name: "web", sectionName: "admin" }),
    ];
    const { policyFor } = attachPolicies(all, targets);
    expect(policyFor(listener("http"), route("admin"))?.ref.name).toBe("rule");
    expect(policyFor(listener("http"), route())?.ref.name).toBe("r");
    const { policyFor: noRoute } = attachPolicies(all.slice(0, 2), targets);
    expect(noRoute(listener("http"), route())?.ref.name).toBe("l");
    expect(noRoute(listener("alt"), route())?.ref.name).toBe("g");
  });

  test("same target: oldest wins, the other is Conflicted; no timestamp sorts after one", () => {
    const ref = { group: gw, kind: "HTTPRoute", name: "web" };
    const { policyFor, ancestors } = attachPolicies(
      [policy("a-new", 20, ref), policy("z-old", 10, ref), policy("b-none", undefined, ref)],
      targets,
    );
    expect(policyFor(listener("http"), route())?.ref.name).toBe("z-old");
    expect(ancestors.get("ns/a-new")?.[0]?.outcome).toBe("Conflicted");
    expect(ancestors.get("ns/b-none")?.[0]?.outcome).toBe("Conflicted");
    expect(ancestors.get("ns/z-old")?.[0]?.outcome).toBe("Accepted");
  });

  test("missing targets and sections are TargetNotFound and attach nowhere", () => {
    const { policyFor, ancestors } = attachPolicies(
      [policy("p", 1, { group: gw, kind: "Gateway", name: "gw", sectionName: "nope" })],
      targets,
    );
    expect(ancestors.get("ns/p")?.[0]?.outcome).toBe("TargetNotFound");
    expect(policyFor(listener("nope"), route())).toBeUndefined();
  });
});

test("mapPlacedRoutes shares what it does not change", () => {
  const l = {
    ...listener("http"),
    virtualHosts: [{ hostname: "*", match: "Any" as const, routes: [route()] }],
  };
  const model = { listeners: [l], backends: {} };
  expect(mapPlacedRoutes(model, (_l, r) => r)).toBe(model);
  const changed = mapPlacedRoutes(model, (_l, r) => ({ ...r, name: "x" }));
  expect(changed.listeners[0]?.virtualHosts[0]?.routes[0]?.name).toBe("x");
  expect(model.listeners[0]?.virtualHosts[0]?.routes[0]?.name).toBe("r");
});
