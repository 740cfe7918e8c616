import { describe, expect, test } from "bun:test";
import { assemble, mergeFile } from "./assemble.ts";
import { parseFileText } from "./documents.ts";
import { loadProblems } from "./problems.ts";

/** Files as the loader sees them, without touching the disk. */
function load(files: Record<string, string>) {
  const results = Object.entries(files).map(([file, text]) =>
    mergeFile({ file, parse: parseFileText(text) }),
  );
  return assemble(results).load;
}

const cls =
  "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: { name: gh }\nspec: { controller: x }\n";

describe("loadProblems", () => {
  test("duplicates, cluster-scoped names and skipped kinds", () => {
    const problems = loadProblems(
      load({ "a.yaml": cls, "b.yaml": `kind: Deployment\n---\n${cls}---\nkind: ServiceAccount\nspec: {}\n` }),
    );
    expect(problems.map((p) => [p.file, p.document, p.object, p.reason, p.severity])).toEqual([
      ["b.yaml", 1, { kind: "IngressClass", namespace: "", name: "gh" }, "DuplicateObject", "error"],
      ["b.yaml", 0, { kind: "Deployment", namespace: "", name: "" }, "SkippedKind", "warning"],
      ["b.yaml", 2, { kind: "ServiceAccount", namespace: "", name: "" }, "SkippedKind", "warning"],
    ]);
  });

  test("a skipped object is named; a Gateway API kind says it is not served", () => {
    const grpc =
      "apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackendTrafficPolicy\nmetadata: { name: g, namespace: ns }\n";
    const cm = "apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: c }\n";
    const problems = loadProblems(load({ "a.yaml": `${grpc}---\n${cm}` }));
    expect(problems.map((p) => [p.object, p.message])).toEqual([
      [
        { kind: "XBackendTrafficPolicy", namespace: "ns", name: "g" },
        "XBackendTrafficPolicy is a Gateway API kind Gatehouse does not support: it is not served and gets no status",
      ],
      [
        { kind: "ServiceAccount", namespace: "", name: "c" },
        'kind "ServiceAccount" is not read by Gatehouse; skipped',
      ],
    ]);
  });

  test("a YAML syntax error is a whole-file problem without a document index", () => {
    const [p, ...rest] = loadProblems(load({ "bad.yaml": "a: [1\n" }));
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ file: "bad.yaml", reason: "InvalidFile", severity: "error" });
    expect(p && "document" in p).toBe(false);
  });

  test("a namespaced object's name is split into namespace and name", () => {
    const ing =
      "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: x, namespace: ns }\nspec: { bogus: 1 }\n";
    expect(loadProblems(load({ "i.yaml": ing }))[0]?.object).toEqual({
      kind: "Ingress",
      namespace: "ns",
      name: "x",
    });
  });

  test("unknown fields of a Gateway API object: a warning, the object served, kept with its last good version", () => {
    const route = (spec: string) =>
      `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: r, namespace: ns }\nspec: ${spec}\n`;
    const first = mergeFile({ file: "r.yaml", parse: parseFileText(route("{ rules: [{ matchs: [] }] }")) });
    const loaded = assemble([first]).load;
    expect(loaded.snapshot.httpRoutes).toHaveLength(1);
    expect(loaded.errors).toEqual([]);
    expect(loadProblems(loaded)).toEqual([
      {
        object: { kind: "HTTPRoute", namespace: "ns", name: "r" },
        reason: "UnknownField",
        message: "spec.rules[0].matchs: unknown field, not read",
        severity: "warning",
        file: "r.yaml",
        document: 0,
      },
    ]);
    // The next save breaks the route: its last good version keeps serving, with its warning.
    const broken = mergeFile({ file: "r.yaml", parse: parseFileText(route("{ rules: 3 }")) }, first.entries);
    const reasons = loadProblems(assemble([broken]).load).map((p) => [p.reason, p.severity]);
    expect(reasons).toEqual([
      ["InvalidObject", "error"],
      ["UnknownField", "warning"],
    ]);
  });
});
