/**
 * The CEL rules of our CRDs (gateway-crds/*.yaml, `x-kubernetes-validations`) compile and say what they
 * mean. The API server is the one place they run, and the test Kubernetes API server does not run them, so
 * each rule is compiled here by a CEL implementation (cel-js) that knows only core CEL (plus nothing of
 * Kubernetes' libraries: a rule that needs one fails to compile here, and would need a newer cluster), then
 * evaluated on objects it must accept and objects it must refuse. A rule without examples fails the test.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { Environment } from "@marcbachmann/cel-js";
import { parseAllDocuments } from "yaml";

interface Rule {
  readonly file: string;
  /** Where in the schema (properties path). */
  readonly at: string;
  readonly rule: string;
}

function rulesOf(node: unknown, file: string, at: string, out: Rule[]): void {
  if (node === null || typeof node !== "object") return;
  const n = node as Record<string, unknown>;
  for (const v of (n["x-kubernetes-validations"] as { rule: string }[] | undefined) ?? [])
    out.push({ file, at, rule: v.rule });
  for (const [k, child] of Object.entries(n)) {
    if (k === "x-kubernetes-validations") continue;
    rulesOf(
      child,
      file,
      k === "properties" || k === "items" ? `${at}${k === "items" ? "[]" : ""}` : `${at}.${k}`,
      out,
    );
  }
}

const dir = `${import.meta.dir}/../../gateway-crds`;
const rules: Rule[] = [];
for (const f of readdirSync(dir).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml"))
  for (const doc of parseAllDocuments(readFileSync(`${dir}/${f}`, "utf8"))) rulesOf(doc.toJS(), f, "", rules);

const target = (kind: string, group: string, sectionName?: string) => ({
  kind,
  group,
  name: "x",
  ...(sectionName !== undefined ? { sectionName } : {}),
});

/** Per rule text: values of `self` it must accept, and values it must refuse. */
const examples: Record<string, { accept: unknown[]; refuse: unknown[] }> = {
  "self.all(t, t.kind == 'Service' ? t.group == '' : t.group == 'gateway.networking.k8s.io')": {
    accept: [
      [target("Service", "", "http"), target("Gateway", "gateway.networking.k8s.io", "web")],
      [target("HTTPRoute", "gateway.networking.k8s.io"), target("GRPCRoute", "gateway.networking.k8s.io")],
    ],
    refuse: [[target("Service", "gateway.networking.k8s.io")], [target("HTTPRoute", "")]],
  },
  "self.all(t, t.kind == 'Ingress' ? t.group == 'networking.k8s.io' : t.group == 'gateway.networking.k8s.io')":
    {
      accept: [
        [target("Gateway", "gateway.networking.k8s.io"), target("Ingress", "networking.k8s.io")],
        [target("HTTPRoute", "gateway.networking.k8s.io", "rule-a")],
      ],
      refuse: [
        [target("Ingress", "gateway.networking.k8s.io")],
        [target("Gateway", "gateway.networking.k8s.io"), target("HTTPRoute", "networking.k8s.io")],
        [target("Gateway", "")],
      ],
    },
  "self.all(t, t.kind != 'Ingress' || !has(t.sectionName))": {
    accept: [
      [target("Ingress", "networking.k8s.io"), target("Gateway", "gateway.networking.k8s.io", "http")],
    ],
    refuse: [[target("Ingress", "networking.k8s.io", "a")]],
  },
  "self.type != 'RemoteJWKS' || has(self.uri)": {
    accept: [{ type: "RemoteJWKS", uri: "https://id.example/jwks" }, { type: "Discovery" }],
    refuse: [{ type: "RemoteJWKS" }],
  },
  "self.type != 'Secret' || has(self.secretRef)": {
    accept: [{ type: "Secret", secretRef: { name: "jwks" } }, { type: "Discovery" }],
    refuse: [{ type: "Secret" }],
  },
  "(has(self.audienceCheck) && !self.audienceCheck) || (has(self.audiences) && size(self.audiences) > 0)": {
    accept: [{ audiences: ["api"] }, { audienceCheck: false }],
    refuse: [{}, { audiences: [] }, { audienceCheck: true }],
  },
  "!has(self.format) || self.format != 'Map' || !has(self.secretRef.key)": {
    accept: [{ secretRef: { name: "u", key: "auth" } }, { format: "Map", secretRef: { name: "u" } }],
    refuse: [{ format: "Map", secretRef: { name: "u", key: "auth" } }],
  },
  "(has(self.urlRewrite) ? 1 : 0) + (has(self.requestRedirect) ? 1 : 0) + (has(self.cors) ? 1 : 0) + (has(self.responseRewrite) ? 1 : 0) == 1":
    {
      accept: [
        { urlRewrite: { hostname: "a.example" } },
        { requestRedirect: {} },
        { cors: { allowOrigins: [] } },
        { responseRewrite: { cookiePath: { from: "/a", to: "/" } } },
      ],
      refuse: [{}, { urlRewrite: {}, cors: {} }, { requestRedirect: {}, responseRewrite: {} }],
    },
};

const cel = new Environment({ unlistedVariablesAreDyn: true });

describe("CRD CEL rules", () => {
  test("there are rules, and every one has examples", () => {
    expect(rules.length).toBeGreaterThan(0);
    expect(
      rules.filter((r) => examples[r.rule] === undefined).map((r) => `${r.file} ${r.at}: ${r.rule}`),
    ).toEqual([]);
  });

  for (const r of rules)
    test(`${r.file} ${r.at}: ${r.rule}`, () => {
      const e = examples[r.rule];
      if (e === undefined) return; // reported by the test above
      expect(e.accept.map((self) => cel.evaluate(r.rule, { self }))).toEqual(e.accept.map(() => true));
      expect(e.refuse.map((self) => cel.evaluate(r.rule, { self }))).toEqual(e.refuse.map(() => false));
    });
});
