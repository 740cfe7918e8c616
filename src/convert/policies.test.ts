/**
 * Policies made or copied by convert: an AuthPolicy that guarded Ingresses is written again with their
 * HTTPRoutes added, and targets past the 16 a policy may hold go to another policy of the same spec,
 * never left unguarded. An Ingress's WAF is written as a WAFPolicy, and the verification compares it.
 */
import { expect, test } from "bun:test";
import { loadCase } from "../../test/golden/load.ts";
import { DEFAULT_HTTP_LISTENER } from "../translate/common/names.ts";
import { translate } from "../translate/translate.ts";
import { convertIngresses } from "./convert.ts";
import { Findings } from "./findings.ts";
import { planGateway } from "./gateway.ts";
import { verifyConversion } from "./verify.ts";

const ingress = (i: number) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: app-${i}, namespace: shop }
spec:
  ingressClassName: gatehouse
  rules:
    - host: app-${i}.example
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
const ids = Array.from({ length: 10 }, (_, i) => i);
const policy = `apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: office-only, namespace: shop }
spec:
  targetRefs: ${JSON.stringify(ids.map((i) => ({ group: "networking.k8s.io", kind: "Ingress", name: `app-${i}` })))}
  ipAllowList: [10.0.0.0/8]
`;
const service =
  "apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: shop }\nspec: { ports: [{ port: 80 }] }\n";

test("an AuthPolicy on ten Ingresses: written again with their HTTPRoutes, the overflow in office-only-2", () => {
  const { snapshot } = loadCase([...ids.map(ingress), policy, service].join("---\n"));
  const result = convertIngresses(snapshot, { translate: { httpPort: 80, httpsPort: 443 } });
  const policies = result.objects.filter((o) => o.kind === "AuthPolicy") as {
    metadata: { name: string };
    spec: { targetRefs: { kind: string; name: string }[]; ipAllowList: string[] };
  }[];
  expect(policies.map((p) => [p.metadata.name, p.spec.targetRefs.length, p.spec.ipAllowList])).toEqual([
    ["office-only", 16, ["10.0.0.0/8"]],
    ["office-only-2", 4, ["10.0.0.0/8"]],
  ]);
  const routes = policies.flatMap((p) =>
    p.spec.targetRefs.filter((t) => t.kind === "HTTPRoute").map((t) => t.name),
  );
  expect(routes.sort()).toEqual(ids.map((i) => `app-${i}`).sort());
  // The Ingresses stay targets: while both exist, neither is open.
  expect(policies[0]?.spec.targetRefs.filter((t) => t.kind === "Ingress").length).toBe(10);
  expect(result.verified.same).toBe(result.verified.hosts);
});

test("a WAF from annotations becomes a WAFPolicy; without it the same hosts would not verify", () => {
  const waf = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/enable-modsecurity: "true"
    nginx.ingress.kubernetes.io/enable-owasp-core-rules: "true"
    gatehouse.dev/waf-mode: Enforce
spec:
  ingressClassName: gatehouse
  rules:
    - host: shop.example
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
  const { snapshot } = loadCase([waf, service].join("---\n"));
  const options = { translate: { httpPort: 80, httpsPort: 443 } };
  const result = convertIngresses(snapshot, options);
  const written = result.objects.find((o) => o.kind === "WAFPolicy") as { spec: Record<string, unknown> };
  expect(written.spec).toMatchObject({
    mode: "Enforce",
    coreRuleSet: { enabled: true, paranoiaLevel: 1 },
    targetRefs: [{ kind: "HTTPRoute", name: "shop" }],
  });
  expect(result.verified).toEqual({ hosts: 1, same: 1 });
  // The verifier compares the WAF: the routes without one are a finding, never the same.
  const dropped = result.objects.filter((o) => o.kind !== "WAFPolicy");
  const findings = new Findings();
  const model = translate(snapshot, options.translate).model;
  const plan = planGateway(
    model.listeners.find((l) => l.name === DEFAULT_HTTP_LISTENER),
    undefined,
    undefined,
    new Findings(),
  );
  const check = verifyConversion(snapshot, options.translate, model, dropped, plan, findings, new Map());
  expect(check).toEqual({ hosts: 1, same: 0 });
  expect(findings.list.map((f) => f.message).join("\n")).toContain("differs in waf");
});
