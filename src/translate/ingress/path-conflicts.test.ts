import { describe, expect, test } from "bun:test";
import { type ConflictCandidate, dropConflicts } from "./path-conflicts.ts";

function claim(name: string, path: string, extra: Partial<ConflictCandidate> = {}): ConflictCandidate {
  return {
    host: { hostname: "h.example", match: "Exact" },
    ref: { kind: "Ingress", namespace: "ns", name },
    field: "spec.rules[0].http.paths[0]",
    label: `Prefix path "${path}"`,
    path: { type: "Prefix", value: path },
    isDefault: false,
    source: { namespace: "ns", name, createdMs: undefined },
    ruleIndex: 0,
    pathIndex: 0,
    ...extra,
  };
}

describe("dropConflicts", () => {
  test("the oldest claim wins, whatever the input order, and the loser is warned", () => {
    const young = claim("a", "/x", { source: { namespace: "ns", name: "a", createdMs: 2000 } });
    const old = claim("b", "/x", { source: { namespace: "ns", name: "b", createdMs: 1000 } });
    for (const input of [
      [young, old],
      [old, young],
    ]) {
      const r = dropConflicts(input);
      expect(r.kept).toEqual([old]);
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toMatchObject({ object: young.ref, reason: "Conflict", severity: "warning" });
      expect(r.problems[0]?.message).toContain("Ingress ns/b, which is older");
    }
  });

  test("without timestamps, namespace/name decides; within one object, the earlier path", () => {
    const r = dropConflicts([claim("b", "/x"), claim("a", "/x")]);
    expect(r.kept.map((c) => c.ref.name)).toEqual(["a"]);
    const first = claim("a", "/y", { ruleIndex: 0 });
    const second = claim("a", "/y", { ruleIndex: 1, field: "spec.rules[1].http.paths[0]" });
    const same = dropConflicts([second, first]);
    expect(same.kept).toEqual([first]);
    expect(same.problems[0]?.message).toContain("which comes first in the same object");
  });

  test("different path, path type, host or kind do not conflict", () => {
    const all = [
      claim("a", "/x"),
      claim("b", "/y"),
      claim("c", "/x", { path: { type: "Exact", value: "/x" } }),
      claim("d", "/x", { host: { hostname: "other.example", match: "Exact" } }),
      claim("e", "/x", { isDefault: true }),
    ];
    const r = dropConflicts(all);
    expect(r.kept).toEqual(all);
    expect(r.problems).toEqual([]);
  });
});
