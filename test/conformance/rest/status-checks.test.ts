import { describe, expect, test } from "bun:test";
import type { ObjectStatus } from "../../../src/status/types.ts";
import type { Placed } from "../gateway-api-manifests.ts";
import { type RestStatusView, runRestStatusCheck } from "./status-checks.ts";

const cond = (type: string, status: string, reason: string, observedGeneration = 1) => ({
  type,
  status,
  reason,
  message: "",
  observedGeneration,
});
const st = (kind: string, ref: string, status: Record<string, unknown>): ObjectStatus => {
  const [namespace, name] = ref.includes("/") ? ref.split("/") : ["", ref];
  return {
    target: { group: "gateway.networking.k8s.io", kind, namespace: namespace ?? "", name: name ?? "" },
    status,
  };
};
const view = (statuses: ObjectStatus[], objects: Placed[] = []): RestStatusView => ({
  statuses,
  objects,
  generationsBefore: new Map(),
  pool: "127.0.21.0/24",
});
const gw = "infra/gw";

describe("rest status checks", () => {
  test("an unknown check fails", () => {
    expect(runRestStatusCheck({ check: "GatewayMoodIsGood" }, view([]))).toContain("unknown status check");
  });

  test("route checks read the route kind they name", () => {
    const parents = [
      {
        parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" },
        controllerName: "gatehouse.dev/gateway-controller",
        conditions: [cond("Accepted", "True", "Accepted")],
      },
    ];
    const v = view([st("TCPRoute", "infra/r", { parents })]);
    const check = {
      check: "RouteCondition",
      route: "infra/r",
      parent: gw,
      condition: cond("Accepted", "True", ""),
    };
    expect(runRestStatusCheck({ ...check, routeKind: "TCPRoute" }, v)).toBe("");
    expect(runRestStatusCheck(check, v)).toContain("HTTPRoute infra/r has no status parent");
  });

  test("GatewayCondition fails on a stale condition even when it matches", () => {
    const placed = [
      {
        file: "f",
        object: {
          apiVersion: "v1",
          kind: "Gateway",
          metadata: { name: "gw", namespace: "infra", generation: 2 },
        },
      },
    ];
    const v = view([st("Gateway", gw, { conditions: [cond("Accepted", "True", "Accepted", 1)] })], placed);
    expect(
      runRestStatusCheck(
        { check: "GatewayCondition", gateway: gw, condition: cond("Accepted", "True", "") },
        v,
      ),
    ).toContain("not at generation 2");
  });

  test("a GatewayClass (cluster-scoped) is found by its name", () => {
    const placed = [
      {
        file: "f",
        object: { apiVersion: "v1", kind: "GatewayClass", metadata: { name: "gc", generation: 2 } },
      },
    ];
    const v = view(
      [st("GatewayClass", "gc", { conditions: [cond("Accepted", "True", "Accepted", 2)] })],
      placed,
    );
    expect(runRestStatusCheck({ check: "GatewayClassAccepted", gatewayClass: "gc", status: "" }, v)).toBe("");
    expect(runRestStatusCheck({ check: "GatewayClassLatestConditions", gatewayClass: "gc" }, v)).toBe("");
    expect(
      runRestStatusCheck({ check: "GatewayClassAccepted", gatewayClass: "gc", status: "False" }, v),
    ).toContain("no Accepted=False");
  });

  test("GatewayAttachedListenerSets counts an absent field as 0", () => {
    const v = view([st("Gateway", gw, { conditions: [cond("Accepted", "True", "Accepted")] })]);
    expect(runRestStatusCheck({ check: "GatewayAttachedListenerSets", gateway: gw, count: 0 }, v)).toBe("");
    expect(runRestStatusCheck({ check: "GatewayAttachedListenerSets", gateway: gw, count: 1 }, v)).toContain(
      "absent",
    );
  });

  test("BackendTLSPolicy: latest passes with no ancestors; a condition needs its ancestor", () => {
    const v = view([
      st("BackendTLSPolicy", "infra/p", {
        ancestors: [{ ancestorRef: { name: "gw" }, conditions: [cond("Accepted", "True", "Accepted")] }],
      }),
    ]);
    expect(runRestStatusCheck({ check: "BackendTLSPolicyLatestConditions", policy: "infra/none" }, v)).toBe(
      "",
    );
    const check = {
      check: "BackendTLSPolicyCondition",
      policy: "infra/p",
      condition: cond("Accepted", "True", "Accepted"),
    };
    expect(runRestStatusCheck({ ...check, ancestor: gw }, v)).toBe("");
    expect(runRestStatusCheck({ ...check, ancestor: "infra/other" }, v)).toContain("no ancestor infra/other");
  });

  test("GatewayStatusAddresses fills in the pool's usable address", () => {
    const addresses = [{ type: "IPAddress", value: "127.0.21.250" }];
    const v = view([st("Gateway", gw, { addresses })]);
    const check = {
      check: "GatewayStatusAddresses",
      gateway: gw,
      count: 1,
      mustContain: "<usable pool entry value>",
      mustNotContain: ["<unusable pool entry value>"],
    };
    expect(runRestStatusCheck(check, v)).toBe("");
  });

  test("GatewayInfrastructurePropagated reads the Gateway's infrastructure record", () => {
    const check = {
      check: "GatewayInfrastructurePropagated",
      gateway: gw,
      labelSelector: "gateway.networking.k8s.io/gateway-name=gw",
      labels: { key2: "value2" },
      annotations: { key1: "value1" },
    };
    const withRecord = (labels: Record<string, string>, annotations: Record<string, string>) =>
      view([{ ...st("Gateway", gw, {}), infrastructure: { labels, annotations } }]);
    const named = { "gateway.networking.k8s.io/gateway-name": "gw" };
    expect(runRestStatusCheck(check, withRecord({ ...named, key2: "value2" }, { key1: "value1" }))).toBe("");
    expect(runRestStatusCheck(check, view([st("Gateway", gw, {})]))).toContain("no infrastructure record");
    expect(runRestStatusCheck(check, withRecord({ key2: "value2" }, { key1: "value1" }))).toContain(
      "does not match",
    );
    expect(runRestStatusCheck(check, withRecord({ ...named, key2: "other" }, {}))).toContain(
      "lacks label key2=value2, annotation key1=value1",
    );
    expect(
      runRestStatusCheck({ ...check, labelSelector: "a in (b)" }, withRecord(named, { key1: "value1" })),
    ).toContain("is not one key=value");
  });
});
