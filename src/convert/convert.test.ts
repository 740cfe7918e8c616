/**
 * convert on every golden Ingress input (test/golden/ingress, test/golden/tls/ingress-*): it never throws,
 * what it writes translates without an error problem, the hosts its own verification calls the same are
 * served the same, and every input but those in INEXACT verifies on every host.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadCase, loadCaseFile } from "../../test/golden/load.ts";
import type { Problem } from "../model/index.ts";
import { type TranslateOptions, translate } from "../translate/translate.ts";
import { convertIngresses } from "./convert.ts";
import type { Finding } from "./findings.ts";
import { SOURCE_ANNOTATION } from "./names.ts";
import { snapshotAfter } from "./verify.ts";

const root = join(import.meta.dir, "../../test/golden");
const inputs = [
  ...readdirSync(join(root, "ingress"))
    .filter((f) => f.endsWith(".in.yaml"))
    .map((f) => join(root, "ingress", f)),
  ...readdirSync(join(root, "tls"))
    .filter((f) => f.startsWith("ingress-") && f.endsWith(".in.yaml"))
    .map((f) => join(root, "tls", f)),
].sort();

/** The client ports, with the golden case's own options (its `<case>.options.json`) over them. */
function caseOptions(file: string): Partial<TranslateOptions> {
  const own = file.replace(/\.in\.yaml$/, ".options.json");
  const extra = existsSync(own) ? (JSON.parse(readFileSync(own, "utf8")) as Record<string, unknown>) : {};
  return { httpPort: 80, httpsPort: 443, ...extra };
}

/** Inputs whose conversion is not exact, and why (convert says so in a finding); every other is exact. */
const INEXACT: Readonly<Record<string, string>> = {
  "annotations-auth-tls.in.yaml": "client certificates per host: Gateway API checks them per listener only",
  "annotations-backend-protocol.in.yaml":
    "h2c, client certificates, TLS versions, FCGI's 503, one BackendTLSPolicy for a port Ingresses shared",
  "annotations-bandwidth.in.yaml": "limit-rate: Gateway API has no response bandwidth limit",
  "annotations-error-pages.in.yaml":
    "custom-http-errors with default-backend: Gateway API has no error pages",
  "gateway-defaults.in.yaml":
    "--default-backend-service catches unmatched requests on Ingress listeners only; custom-http-errors",
  "annotations-fail-closed.in.yaml":
    "the 403 of an unenforced access annotation is an AuthPolicy denying all",
  "annotations-mirror.in.yaml": "mirror-target URLs: Gateway API mirrors to Services only",
  "annotations-not-honoured.in.yaml": "proxy-read-timeout between reads: Gateway API has no such timeout",
  "annotations-proxy-timeouts.in.yaml": "read, send and connect timeouts: Gateway API has no such timeouts",
  "annotations-source-ranges.in.yaml":
    "a canary with access controls of its own answers 403 (a deny-all policy)",
  "annotations-upstream-request.in.yaml": "service-upstream, connect timeouts, enable-access-log: false",
  "ingress-ssl-ciphers.in.yaml": "ssl-ciphers per host: Gateway API has no cipher setting",
  "load-balancing.in.yaml":
    "load-balance ewma, upstream-hash-by, session cookie attributes: no HTTPRoute fields",
  "backend-app-protocol.in.yaml":
    "appProtocol kubernetes.io/wss: an Ingress backend, refused in an HTTPRoute (500)",
  "path-implementation-specific.in.yaml": "a Prefix path with characters an HTTPRoute path may not hold",
  "port-not-found.in.yaml": "a missing Service port answers 503 from an Ingress, 500 from an HTTPRoute",
  "service-external-name.in.yaml": "an ExternalName Service: 503 from an Ingress, 500 from an HTTPRoute",
  "service-unknown.in.yaml": "a missing Service: 503 from an Ingress, 500 from an HTTPRoute",
};

type Json = Record<string, unknown>;
type Meta = { namespace: string; name: string };
const refKey = (kind: string, m: Meta) => `${kind}/${m.namespace}/${m.name}`;

/**
 * Whether convert said what an error on an object it wrote comes from: an HTTPRoute's error is a host its
 * verification found served differently (or a rule it could not keep); an AuthPolicy without a provider
 * is the fail-closed stand-in it noted, and so is a WAFPolicy holding the Ingress's unreadable WAF
 * annotations; a copied policy still names the Ingress it guarded (on purpose:
 * removing it would leave the Ingress open while both exist).
 */
function explained(p: Problem, object: Json, findings: readonly Finding[]): boolean {
  const about = (ingress: string) =>
    findings.filter(
      (f) =>
        f.object.kind === "Ingress" && f.object.namespace === p.object.namespace && f.object.name === ingress,
    );
  if (p.object.kind === "HTTPRoute") {
    const ingress = (object.metadata as { annotations: Record<string, string> }).annotations[
      SOURCE_ANNOTATION
    ] as string;
    return about(ingress).some(
      (f) => f.kind === "unconverted" && /serve it differently|not kept/.test(f.message),
    );
  }
  if (p.object.kind === "AuthPolicy" && p.message.includes("names no provider")) {
    const targets = (object.spec as { targetRefs: { name: string }[] }).targetRefs;
    return targets.some((t) =>
      about(t.name.replace(/-\d+$/, "")).some((f) => f.message.includes("cannot be enforced as written")),
    );
  }
  if (p.object.kind === "WAFPolicy" && p.reason === "Invalid") {
    const targets = (object.spec as { targetRefs: { name: string }[] }).targetRefs;
    return targets.some((t) =>
      about(t.name.replace(/-\d+$/, "")).some((f) =>
        f.message.includes("written as a WAFPolicy with the same values"),
      ),
    );
  }
  return p.object.kind !== "HTTPRoute" && /^target Ingress (\S+): Ingress \1 not found$/.test(p.message);
}

describe("convert on the golden Ingress inputs", () => {
  test("there are inputs", () => {
    expect(inputs.length).toBeGreaterThan(50);
  });
  for (const file of inputs) {
    test(file.slice(root.length + 1), async () => {
      const { snapshot } = await loadCaseFile(file);
      const options = caseOptions(file);
      const result = convertIngresses(snapshot, { translate: options });
      const after = translate(
        snapshotAfter(snapshot, result.objects, "gatehouse.dev/gateway-controller"),
        options,
      );
      const written = new Map(result.objects.map((o) => [refKey(o.kind as string, o.metadata as Meta), o]));
      const unsaid = after.problems
        .filter((p) => p.severity === "error" && written.has(refKey(p.object.kind, p.object)))
        .filter((p) => !explained(p, written.get(refKey(p.object.kind, p.object)) as Json, result.findings))
        .map((p) => `${p.object.kind} ${p.object.namespace}/${p.object.name}: ${p.message}`);
      expect(unsaid).toEqual([]);
      expect(result.verified.skipped).toBeUndefined();
      // Every input converts exactly, but where a finding says why not.
      const name = file.slice(file.lastIndexOf("/") + 1);
      if (!(name in INEXACT)) expect(result.verified.same).toBe(result.verified.hosts);
      if (name in INEXACT) expect(result.verified.same).toBeLessThan(result.verified.hosts);
      // Converting twice writes the same objects in the same order.
      expect(convertIngresses(snapshot, { translate: options }).objects).toEqual(result.objects);
    });
  }
});

test("ssl-passthrough hosts become TLS Passthrough listeners and TLSRoutes that reach the same backends", async () => {
  const file = join(root, "ingress/annotations-ssl-passthrough.in.yaml");
  const { snapshot } = await loadCaseFile(file);
  const result = convertIngresses(snapshot, { translate: caseOptions(file) });
  const gateway = result.objects.find((o) => o.kind === "Gateway") as { spec: { listeners: Json[] } };
  expect(gateway.spec.listeners.filter((l) => l.protocol === "TLS")).toEqual([
    {
      name: "tls-secure-example",
      hostname: "secure.example",
      port: 443,
      protocol: "TLS",
      tls: { mode: "Passthrough" },
      allowedRoutes: { namespaces: { from: "All" } },
    },
  ]);
  const tlsRoutes = result.objects.filter((o) => o.kind === "TLSRoute") as { spec: Json }[];
  expect(tlsRoutes.map((r) => [r.spec.hostnames, r.spec.rules])).toEqual([
    [["secure.example"], [{ backendRefs: [{ name: "web", port: 443 }] }]],
  ]);
  expect(result.verified.same).toBe(result.verified.hosts);
});

/** A kubernetes.io/tls Secret shop/foo-tls for foo.bar.com (the golden tls/ingress-basic certificate). */
const fooTls = (
  readFileSync(join(root, "tls/ingress-basic.in.yaml"), "utf8")
    .split(/^---$/m)
    .find((d) => d.includes("kind: Secret")) as string
).replace("name: conformance-tls, namespace: default", "name: foo-tls, namespace: shop");

test("ssl-passthrough beside HTTPS hosts is a finding: the two cannot share the port", () => {
  const { snapshot } = loadCase(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pass
  namespace: shop
  annotations: { nginx.ingress.kubernetes.io/ssl-passthrough: "true" }
spec:
  ingressClassName: gatehouse
  rules:
    - host: pass.example
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 443 } } } }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: terminate, namespace: shop }
spec:
  ingressClassName: gatehouse
  tls: [{ hosts: [foo.bar.com], secretName: foo-tls }]
  rules:
    - host: foo.bar.com
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
---
${fooTls}`);
  const result = convertIngresses(snapshot, {
    translate: { httpPort: 80, httpsPort: 443, enableSslPassthrough: true },
  });
  expect(result.objects.some((o) => o.kind === "TLSRoute")).toBe(false);
  const said = result.findings.filter((f) => f.object.name === "pass" && f.kind === "unconverted");
  expect(said.map((f) => f.message)).toContain(
    "ssl-passthrough of pass.example: a TLS Passthrough listener cannot share the HTTPS port with HTTPS listeners; not written",
  );
});
