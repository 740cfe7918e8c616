import { describe, expect, test } from "bun:test";
import { desiredStatus, replacementPatch, sameJson } from "./merge.ts";

const ours = "gatehouse.dev/gateway-controller";
const cond = (type: string, status: string, extra: Record<string, unknown> = {}) => ({
  type,
  status,
  reason: type,
  message: "",
  ...extra,
});

describe("desiredStatus", () => {
  test("keeps lastTransitionTime when a condition's status did not change, stamps now otherwise", () => {
    const current = {
      conditions: [
        cond("Accepted", "True", { lastTransitionTime: "T0" }),
        cond("Programmed", "False", { lastTransitionTime: "T0" }),
      ],
    };
    const computed = {
      conditions: [cond("Accepted", "True", { message: "new text" }), cond("Programmed", "True")],
    };
    expect(desiredStatus(current, computed, ours, "T1")).toEqual({
      conditions: [
        cond("Accepted", "True", { message: "new text", lastTransitionTime: "T0" }),
        cond("Programmed", "True", { lastTransitionTime: "T1" }),
      ],
    });
  });

  test("listener conditions pair by listener name, whatever the order", () => {
    const current = {
      listeners: [{ name: "b", conditions: [cond("Accepted", "True", { lastTransitionTime: "Tb" })] }],
    };
    const computed = {
      listeners: [
        { name: "a", conditions: [cond("Accepted", "True")] },
        { name: "b", conditions: [cond("Accepted", "True")] },
      ],
    };
    const out = desiredStatus(current, computed, ours, "T1") as {
      listeners: { conditions: { lastTransitionTime: string }[] }[];
    };
    expect(out.listeners.map((l) => l.conditions[0]?.lastTransitionTime)).toEqual(["T1", "Tb"]);
  });

  test("route parents of other controllers are kept untouched; ours replaced", () => {
    const foreign = {
      parentRef: { name: "x" },
      controllerName: "other.io/c",
      conditions: [cond("Accepted", "False", { lastTransitionTime: "T0" })],
    };
    const stale = { parentRef: { name: "gone" }, controllerName: ours, conditions: [] };
    const computed = {
      parents: [{ parentRef: { name: "gw" }, controllerName: ours, conditions: [cond("Accepted", "True")] }],
    };
    const out = desiredStatus({ parents: [foreign, stale] }, computed, ours, "T1") as { parents: unknown[] };
    expect(out.parents).toEqual([
      foreign,
      {
        parentRef: { name: "gw" },
        controllerName: ours,
        conditions: [cond("Accepted", "True", { lastTransitionTime: "T1" })],
      },
    ]);
  });

  test("an unchanged status compares equal whatever the key order, so nothing is written", () => {
    const current = {
      conditions: [
        { lastTransitionTime: "T0", message: "", reason: "Accepted", status: "True", type: "Accepted" },
      ],
    };
    const desired = desiredStatus(current, { conditions: [cond("Accepted", "True")] }, ours, "T9");
    expect(sameJson(current, desired)).toBe(true);
  });
});

test("replacementPatch nulls what the desired status dropped", () => {
  expect(replacementPatch({ a: 1, b: { c: 1, d: 2 }, e: [1] }, { b: { c: 2 }, e: [] })).toEqual({
    a: null,
    b: { c: 2, d: null },
    e: [],
  });
});
