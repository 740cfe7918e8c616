import { describe, expect, test } from "bun:test";
import {
  compareRoutePrecedence,
  compareSourceAge,
  type RouteOrder,
  type SourceOrder,
  sameMembers,
} from "./sort.ts";

const src = (name: string, createdMs?: number, namespace = "ns"): SourceOrder => ({
  namespace,
  name,
  createdMs,
});

function route(type: "Exact" | "Prefix", value: string, extra: Partial<RouteOrder> = {}): RouteOrder {
  return { path: { type, value }, isDefault: false, source: src("a"), ruleIndex: 0, pathIndex: 0, ...extra };
}

function order(routes: RouteOrder[]): string[] {
  return [...routes]
    .sort(compareRoutePrecedence)
    .map((r) => `${r.path.type} ${r.path.value} ${r.source.name}`);
}

describe("compareSourceAge", () => {
  test("older first, missing timestamps last, then namespace/name", () => {
    const sorted = [src("z", 2000), src("b"), src("y", 1000), src("a"), src("c", undefined, "aa")].sort(
      compareSourceAge,
    );
    expect(sorted.map((s) => s.name)).toEqual(["y", "z", "c", "a", "b"]);
  });

  test("equal timestamps fall back to namespace/name", () => {
    expect(compareSourceAge(src("b", 5), src("a", 5))).toBeGreaterThan(0);
    expect(compareSourceAge(src("a", 5), src("a", 5))).toBe(0);
  });
});

describe("compareRoutePrecedence", () => {
  test("Exact before Prefix for the same path, and before shorter prefixes", () => {
    expect(order([route("Prefix", "/foo"), route("Exact", "/foo"), route("Prefix", "/")])).toEqual([
      "Exact /foo a",
      "Prefix /foo a",
      "Prefix / a",
    ]);
  });

  test("longer prefix first", () => {
    expect(order([route("Prefix", "/aaa"), route("Prefix", "/aaa/bbb"), route("Prefix", "/")])).toEqual([
      "Prefix /aaa/bbb a",
      "Prefix /aaa a",
      "Prefix / a",
    ]);
  });

  test("equal length: older source, then name, then position", () => {
    const routes = [
      route("Prefix", "/bb", { source: src("new", 2000) }),
      route("Prefix", "/aa", { source: src("none") }),
      route("Prefix", "/cc", { source: src("old", 1000) }),
      route("Prefix", "/dd", { source: src("none"), ruleIndex: 0, pathIndex: 1 }),
      route("Prefix", "/ee", { source: src("abc") }),
    ];
    expect(order(routes)).toEqual([
      "Prefix /cc old",
      "Prefix /bb new",
      "Prefix /ee abc",
      "Prefix /aa none",
      "Prefix /dd none",
    ]);
  });

  test("default-backend routes come after every rule route, even a shorter one", () => {
    const def = route("Prefix", "/", { isDefault: true, source: src("old", 1) });
    expect(order([def, route("Prefix", "/", { source: src("b") })])[0]).toBe("Prefix / b");
  });

  test("is a total order: same result whatever the input order", () => {
    const routes = [
      route("Prefix", "/x", { source: src("b") }),
      route("Exact", "/x/y", { source: src("a", 3) }),
      route("Prefix", "/x", { source: src("a", 3) }),
      route("Prefix", "/y", { source: src("a", 3), pathIndex: 2 }),
    ];
    const expected = order(routes);
    expect(order([...routes].reverse())).toEqual(expected);
  });
});

describe("sameMembers", () => {
  test("the same strings as often, in any order; not a subset, not other counts", () => {
    expect(sameMembers(["b", "a"], ["a", "b"])).toBe(true);
    expect(sameMembers([], [])).toBe(true);
    expect(sameMembers(["a", "b"], ["a"])).toBe(false);
    expect(sameMembers(["a", "a", "b"], ["a", "b", "b"])).toBe(false);
    expect(sameMembers(["a"], ["A"])).toBe(false);
  });
});
