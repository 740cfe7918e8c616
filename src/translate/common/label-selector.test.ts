import { describe, expect, test } from "bun:test";
import { matchesSelector, namespaceLabels, selectorProblem } from "./label-selector.ts";

const labels = { team: "a", tier: "web" };

describe("matchesSelector", () => {
  test("matchLabels must all match; empty selector matches all", () => {
    expect(matchesSelector({ matchLabels: { team: "a" } }, labels)).toBe(true);
    expect(matchesSelector({ matchLabels: { team: "a", tier: "db" } }, labels)).toBe(false);
    expect(matchesSelector({}, labels)).toBe(true);
  });
  test("matchExpressions operators", () => {
    const m = (operator: string, values?: string[]) =>
      matchesSelector(
        { matchExpressions: [{ key: "team", operator, ...(values ? { values } : {}) }] },
        labels,
      );
    expect(m("In", ["a", "b"])).toBe(true);
    expect(m("In", ["b"])).toBe(false);
    expect(m("NotIn", ["b"])).toBe(true);
    expect(m("NotIn", ["a"])).toBe(false);
    expect(m("Exists")).toBe(true);
    expect(m("DoesNotExist")).toBe(false);
    expect(m("Bogus")).toBe(false);
    expect(m("In", [])).toBe(false);
  });
  test("NotIn and DoesNotExist hold for a missing key", () => {
    const sel = {
      matchExpressions: [
        { key: "zone", operator: "NotIn", values: ["x"] },
        { key: "zone", operator: "DoesNotExist" },
      ],
    };
    expect(matchesSelector(sel, labels)).toBe(true);
  });
});

describe("namespaceLabels", () => {
  test("namespaces without objects carry only their name label; the name label cannot be faked", () => {
    const of = namespaceLabels([
      {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "a", labels: { x: "1", "kubernetes.io/metadata.name": "b" } },
      },
    ]);
    expect(of("a")).toEqual({ x: "1", "kubernetes.io/metadata.name": "a" });
    expect(of("zzz")).toEqual({ "kubernetes.io/metadata.name": "zzz" });
  });
});

test("selectorProblem", () => {
  expect(selectorProblem({ matchExpressions: [{ key: "a", operator: "In" }] })).toContain("needs values");
  expect(selectorProblem({ matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] })).toContain(
    "no values",
  );
  expect(selectorProblem({ matchExpressions: [{ key: "a", operator: "Nope" }] })).toContain(
    "unknown operator",
  );
  expect(selectorProblem({ matchLabels: { a: "b" } })).toBeUndefined();
});
