/**
 * convert on bad input: two Ingresses clashing on a host and path, a bad annotation value, an auth Secret
 * in another namespace, an Ingress with nothing valid. Converted as far as it goes; each problem is a
 * finding (so `--strict` fails); nothing is left open.
 */
import { expect, test } from "bun:test";
import { loadCase } from "../../test/golden/load.ts";
import { convertIngresses } from "./convert.ts";
import { conversionYaml } from "./output.ts";

const ingress = (name: string, created: string, annotations: Record<string, string>, path = "/api") => `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
  creationTimestamp: "${created}"
  annotations: ${JSON.stringify(annotations)}
spec:
  ingressClassName: gatehouse
  rules:
    - host: shop.example
      http:
        paths:
          - { path: ${JSON.stringify(path)}, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;

const input = [
  ingress("old", "2024-01-01T00:00:00Z", {}),
  ingress("new", "2025-01-01T00:00:00Z", {}),
  ingress(
    "bad-value",
    "2025-01-01T00:00:00Z",
    { "nginx.ingress.kubernetes.io/proxy-read-timeout": "abc" },
    "/v",
  ),
  ingress(
    "elsewhere",
    "2025-01-01T00:00:00Z",
    {
      "nginx.ingress.kubernetes.io/auth-type": "basic",
      "nginx.ingress.kubernetes.io/auth-secret": "other/users",
    },
    "/admin",
  ),
  ingress("nothing", "2025-01-01T00:00:00Z", {}, "no-slash"),
  "apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: shop }\nspec: { ports: [{ port: 80 }] }\n",
].join("---\n");

test("bad input converts as far as it goes, and every problem is a finding", () => {
  const result = convertIngresses(loadCase(input).snapshot, { translate: { httpPort: 80, httpsPort: 443 } });
  const about = (name: string) => result.findings.filter((f) => f.object.name === name).map((f) => f.message);
  // The clash is decided as served (the oldest wins) and the loser is told.
  expect(about("new").some((m) => m.includes("is also defined by"))).toBe(true);
  expect(
    result.objects.filter((o) => o.kind === "HTTPRoute").map((o) => (o.metadata as { name: string }).name),
  ).toEqual(["bad-value", "elsewhere", "old"]);
  expect(about("bad-value").some((m) => m.includes('proxy-read-timeout "abc"'))).toBe(true);
  expect(about("nothing").some((m) => m.includes("must be an absolute path"))).toBe(true);
  // The auth Secret of another namespace stays closed: an AuthPolicy without a provider (401).
  const policy = result.objects.find((o) => o.kind === "AuthPolicy") as { spec: Record<string, unknown> };
  expect(Object.keys(policy.spec)).toEqual(["targetRefs"]);
  expect(result.findings.filter((f) => f.kind !== "note").length).toBeGreaterThan(0);
  expect(result.verified.same).toBe(result.verified.hosts);
});

test("an Ingress split into more HTTPRoutes never takes another Ingress's name", () => {
  const two = (name: string, rules: string) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: shop }
spec:
  ingressClassName: gatehouse
  rules:
${rules}`;
  const rule = (host: string, path: string) =>
    `    - host: ${host}\n      http:\n        paths:\n          - { path: ${path}, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }\n`;
  const text = [
    two("web", rule("a.example", "/x") + rule("b.example", "/y")),
    two("web-2", rule("c.example", "/z")),
  ].join("---\n");
  const result = convertIngresses(loadCase(text).snapshot, { translate: { httpPort: 80, httpsPort: 443 } });
  const names = result.objects
    .filter((o) => o.kind === "HTTPRoute")
    .map((o) => [(o.metadata as { name: string }).name, (o.spec as { hostnames: string[] }).hostnames]);
  expect(names).toEqual([
    ["web", ["a.example"]],
    ["web-3", ["b.example"]],
    ["web-2", ["c.example"]],
  ]);
});

test("a finding quoting a line break stays one comment line", () => {
  const text = conversionYaml({
    objects: [],
    findings: [
      {
        object: { kind: "Ingress", namespace: "shop", name: "web" },
        message: 'x "1\nkind: Secret"',
        kind: "unconverted",
      },
    ],
    verified: { hosts: 0, same: 0 },
  });
  expect(text.split("\n").filter((l) => l !== "" && !l.startsWith("# "))).toEqual([]);
  expect(text).toContain('x "1\\u000akind: Secret"');
});
