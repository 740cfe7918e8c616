/** `gatehouse convert -f` as a user runs it: the real CLI in a child process, on files in a temp folder. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { KubeApiServer } from "../../test/helpers/kube-api-server.ts";
import { gateway, gatewayClass, ingress, service, slice } from "../../test/helpers/kube-fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-convert-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const serviceYaml = `apiVersion: v1
kind: Service
metadata: { name: web, namespace: shop }
spec: { ports: [{ port: 80 }] }
`;
const plain = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: plain, namespace: shop }
spec:
  ingressClassName: gatehouse
  rules:
    - host: plain.example
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
const lossy = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: lossy
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/limit-rate: "1024"
spec:
  ingressClassName: gatehouse
  rules:
    - host: lossy.example
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
const regex = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: regex
  namespace: shop
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/rewrite-target: /$2
spec:
  ingressClassName: gatehouse
  rules:
    - host: regex.example
      http:
        paths:
          - path: /api(/|$)(.*)
            pathType: ImplementationSpecific
            backend: { service: { name: web, port: { number: 80 } } }
`;
writeFileSync(join(dir, "service.yaml"), serviceYaml);
writeFileSync(join(dir, "regex.yaml"), regex);
writeFileSync(join(dir, "plain.yaml"), plain);
writeFileSync(join(dir, "lossy.yaml"), lossy);

async function convertCli(...args: string[]) {
  return gatehouse("convert", ...args);
}

async function gatehouse(command: string, ...args: string[]) {
  const argv = args.flatMap((a) => (a.endsWith(".yaml") ? ["-f", join(dir, a)] : [a]));
  const proc = Bun.spawn(["bun", join(import.meta.dir, "../main.ts"), command, ...argv], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const objects = parseAllDocuments(stdout)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((o) => o !== null);
  return { stdout, objects, stderr, code };
}

const kinds = (objects: Record<string, unknown>[]) => objects.map((o) => o.kind);

describe("gatehouse convert -f", () => {
  test("a plain Ingress: a Gateway on port 80 and one HTTPRoute, verified, exit 0 even with --strict", async () => {
    const { objects, stderr, code } = await convertCli("service.yaml", "plain.yaml", "--strict");
    expect(code).toBe(0);
    expect(kinds(objects)).toEqual(["Gateway", "HTTPRoute"]);
    const gateway = objects[0] as { spec: { listeners: { port: number }[] } };
    expect(gateway.spec.listeners.map((l) => l.port)).toEqual([80]);
    expect(stderr).toContain(
      "1 of 1 converted host translate to the routes the Ingresses served; 0 findings",
    );
  });

  test("what cannot be kept is a comment, a stderr line, and exit 1 with --strict (0 without)", async () => {
    const strict = await convertCli("service.yaml", "lossy.yaml", "--strict");
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain("Ingress shop/lossy: the response bandwidth limit of 1048576 bytes/s");
    expect(strict.stdout).toMatch(/^# gatehouse convert: Ingress shop\/lossy: the response bandwidth limit/m);
    expect((await convertCli("service.yaml", "lossy.yaml")).code).toBe(0);
  });

  test("--gateway NS/NAME: no Gateway written, routes attach to its listener by name", async () => {
    const { objects, code } = await convertCli("service.yaml", "plain.yaml", "--gateway", "infra/edge");
    expect(code).toBe(0);
    expect(kinds(objects)).toEqual(["HTTPRoute"]);
    const route = objects[0] as { spec: { parentRefs: unknown[] } };
    expect(route.spec.parentRefs).toEqual([{ name: "edge", namespace: "infra", sectionName: "http" }]);
  });

  test("a --gateway that is not NAMESPACE/NAME is refused with exit 2", async () => {
    const { stderr, code } = await convertCli("plain.yaml", "--gateway", "edge");
    expect(code).toBe(2);
    expect(stderr).toContain('--gateway "edge" is not NAMESPACE/NAME');
  });

  test("a capture-group rewrite: an HTTPRouteFilter and a (?i) pattern; --portable writes Gateway API only", async () => {
    const exact = await convertCli("service.yaml", "regex.yaml", "--strict");
    expect(exact.code).toBe(0);
    expect(kinds(exact.objects)).toEqual(["Gateway", "HTTPRoute", "HTTPRouteFilter"]);
    const [, route, filter] = exact.objects as {
      spec: { rules: { matches: { path: unknown }[]; filters: unknown[] }[]; urlRewrite: unknown };
    }[];
    expect(route?.spec.rules[0]?.matches[0]?.path).toEqual({
      type: "RegularExpression",
      value: "(?i)(?:/api(/|$)(.*))[\\s\\S]*",
    });
    expect(route?.spec.rules[0]?.filters).toEqual([
      {
        type: "ExtensionRef",
        extensionRef: { group: "gatehouse.dev", kind: "HTTPRouteFilter", name: "regex-rewrite" },
      },
    ]);
    expect(filter?.spec.urlRewrite).toEqual({
      path: {
        type: "ReplaceRegexMatch",
        replaceRegexMatch: { pattern: "(?i)(?:/api(/|$)(.*))[\\s\\S]*", substitution: "/$2" },
      },
    });
    expect(exact.stderr).toContain(
      "1 of 1 converted host translate to the routes the Ingresses served; 0 findings",
    );

    const portable = await convertCli("service.yaml", "regex.yaml", "--portable", "--strict");
    expect(portable.code).toBe(1);
    expect(kinds(portable.objects)).toEqual(["Gateway", "HTTPRoute"]);
    const rule = (portable.objects[1] as { spec: { rules: { matches: unknown[]; filters: unknown[] }[] } })
      .spec.rules[0];
    expect(rule?.matches).toEqual([{ path: { type: "PathPrefix", value: "/api" } }]);
    expect(rule?.filters).toEqual([
      { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } },
    ]);
    expect(portable.stderr).toContain("regardless of case");
  });

  test("--kube --gateway: the cluster's Ingress converted onto its Gateway, applied, served from the HTTPRoute", async () => {
    const api = await KubeApiServer.start();
    try {
      api.apply(service("web"));
      api.apply(slice("web", [8080]));
      api.apply(gatewayClass());
      api.apply(gateway("edge", 8080));
      const shop = ingress("shop", "shop.example", "/cart(/|$)(.*)", "web") as {
        metadata: Record<string, unknown>;
      };
      shop.metadata.annotations = {
        "nginx.ingress.kubernetes.io/use-regex": "true",
        "nginx.ingress.kubernetes.io/rewrite-target": "/$2",
      };
      api.apply(shop);
      const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
      const converted = await convertCli(
        "--kube",
        "--kubeconfig",
        kubeconfig,
        "--gateway",
        "demo/edge",
        "--strict",
      );
      expect(converted.code).toBe(0);
      expect(kinds(converted.objects)).toEqual(["HTTPRoute", "HTTPRouteFilter"]);
      const route = converted.objects[0] as { spec: { parentRefs: unknown[] } };
      expect(route.spec.parentRefs).toEqual([{ name: "edge", sectionName: "http" }]);
      const before = await gatehouse("routes", "--kube", "--kubeconfig", kubeconfig);
      for (const o of converted.objects) api.apply(o as never);
      api.remove("Ingress", "demo", "shop");
      const after = await gatehouse("routes", "--kube", "--kubeconfig", kubeconfig);
      expect([after.code, after.stderr]).toEqual([0, ""]);
      const line = (out: string) =>
        (out.split("\n").find((l) => l.includes("shop.example")) ?? "(none)").replace(/\s+/g, " ").trim();
      // The same route (case-insensitive, as nginx's ~*), now from the HTTPRoute on the Gateway's listener.
      const match = "shop.example ~* (?:/cart(/|$)(.*))[\\s\\S]* → demo/web:80";
      expect(line(before.stdout)).toBe(`default/http (http :8080) ${match} Ingress demo/shop`);
      expect(line(after.stdout)).toBe(`gateway/demo/edge/http (http :8080) ${match} HTTPRoute demo/shop`);
    } finally {
      await api.stop();
    }
  });

  test("the same input converts to the same text", async () => {
    const a = await convertCli("service.yaml", "lossy.yaml", "plain.yaml");
    const b = await convertCli("plain.yaml", "lossy.yaml", "service.yaml");
    expect(b.stdout).toBe(a.stdout);
  });
});
