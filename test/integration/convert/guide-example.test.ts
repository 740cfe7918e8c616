/**
 * The worked example of docs/migrating-from-ingress-nginx.md runs: docs/migrating-from-ingress-nginx.yaml
 * is served as written and as `convert` writes it (roundtrip.ts), every Service's endpoints on the scripted
 * backend, and each request below gets the same answer from both, except the ones listed with what
 * convert cannot express (which it must have said about that Ingress, and which must differ).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import type { AnnotationCase } from "../ingress-annotations/harness.ts";
import { observed, type RoundTrip, startRoundTrip } from "./roundtrip.ts";

const example = readFileSync(
  join(import.meta.dir, "../../../docs/migrating-from-ingress-nginx.yaml"),
  "utf8",
);

/** The example with an EndpointSlice per Service, its one endpoint the scripted backend. */
function manifests(backendPort: number): string {
  const services = [...example.matchAll(/kind: Service\nmetadata: \{ name: ([a-z-]+), namespace: shop \}/g)];
  const slices = services.map(
    ([, name]) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: shop, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${backendPort} }]
`,
  );
  return [example, ...slices].join("---\n");
}

/** A written object, read in a test that fails loudly on any other shape. */
// biome-ignore lint/suspicious/noExplicitAny: the objects convert writes are plain JSON of many shapes
type Loose = Record<string, any>;

const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`;

interface GuideRequest {
  readonly name: string;
  readonly ingress: string;
  readonly host: string;
  readonly request: AnnotationCase["request"];
  /** Set when the answers differ: what convert cannot express. */
  readonly differs?: string;
}

const requests: readonly GuideRequest[] = [
  {
    name: "rewrite: the prefix is stripped",
    ingress: "rewrite",
    host: "rewrite.bar.com",
    request: { path: "/something/new/x?q=1" },
  },
  {
    name: "rewrite: the bare prefix becomes /",
    ingress: "rewrite",
    host: "rewrite.bar.com",
    request: { path: "/something" },
  },
  {
    name: "rewrite: another path finds no route",
    ingress: "rewrite",
    host: "rewrite.bar.com",
    request: { path: "/other" },
  },
  {
    name: "rewrite: nginx matched the pattern in any case",
    ingress: "rewrite",
    host: "rewrite.bar.com",
    request: { path: "/SOMETHING/x" },
  },
  {
    name: "canary: the header sends to the canary",
    ingress: "production",
    host: "echo.prod.mydomain.com",
    request: { path: "/", headers: { "x-canary": "always" } },
  },
  {
    name: "canary: without the header, the weighted split",
    ingress: "production",
    host: "echo.prod.mydomain.com",
    request: { path: "/page" },
  },
  {
    name: "basic auth: no credentials get the challenge",
    ingress: "ingress-with-auth",
    host: "auth.bar.com",
    request: { path: "/" },
  },
  {
    name: "basic auth: a user gets in",
    ingress: "ingress-with-auth",
    host: "auth.bar.com",
    request: { path: "/in", headers: { authorization: basic("alice", "secret") } },
  },
  {
    name: "basic auth: a wrong password is refused",
    ingress: "ingress-with-auth",
    host: "auth.bar.com",
    request: { path: "/", headers: { authorization: basic("alice", "nope") } },
  },
  {
    name: "CORS: a preflight from the allowed origin",
    ingress: "api",
    host: "api.bar.com",
    request: {
      path: "/api/items",
      method: "OPTIONS",
      headers: { origin: "https://app.bar.com", "access-control-request-method": "PUT" },
    },
  },
  {
    name: "CORS: a GET from the allowed origin",
    ingress: "api",
    host: "api.bar.com",
    request: { path: "/api/items", headers: { origin: "https://app.bar.com" } },
  },
  {
    name: "CORS: a preflight from another origin",
    ingress: "api",
    host: "api.bar.com",
    request: {
      path: "/api/items",
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "PUT" },
    },
  },
  {
    name: "TLS: plain HTTP is redirected to https with 308",
    ingress: "nginx-test",
    host: "foo.bar.com",
    request: { path: "/docs?x=1" },
  },
  {
    name: "TLS: the redirect of a path with a trailing slash",
    ingress: "nginx-test",
    host: "foo.bar.com",
    request: { path: "/docs/" },
  },
];

async function send(port: number, r: GuideRequest) {
  const res = await fetch(`http://127.0.0.1:${port}${r.request.path}`, {
    method: r.request.method ?? "GET",
    headers: { host: r.host, ...r.request.headers },
    redirect: "manual",
  });
  const body = await res.text();
  const seen = res.headers.get("content-type") === "application/json" ? JSON.parse(body) : undefined;
  return { status: res.status, headers: res.headers, body, seen, ms: 0, caseHost: r.host, port };
}

forEachFront("the migration guide's worked example", (front) => {
  let rt: RoundTrip;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    rt = await startRoundTrip(manifests, front);
  });

  afterAll(async () => {
    await rt?.stop();
    if (restore) setLogSink(restore);
  });

  test("convert writes the Gateway with the certificate, the grant, the canary split and the basic auth policy", () => {
    const byKind = (kind: string) => rt.conversion.objects.filter((o) => o.kind === kind) as Loose[];
    const [gateway] = byKind("Gateway");
    const https = gateway?.spec.listeners.find((l: { hostname?: string }) => l.hostname === "foo.bar.com");
    expect(https?.tls.certificateRefs).toEqual([{ kind: "Secret", name: "tls-secret", namespace: "shop" }]);
    expect(byKind("ReferenceGrant").map((g) => [g.metadata.namespace, g.spec.to])).toEqual([
      ["shop", [{ group: "", kind: "Secret", name: "tls-secret" }]],
    ]);
    const production = byKind("HTTPRoute").find((r) => r.metadata.name === "production");
    const split = production?.spec.rules
      .at(-1)
      .backendRefs.map((b: { name: string; weight: number }) => [b.name, b.weight]);
    expect(split).toEqual([
      ["production", 50],
      ["canary", 50],
    ]);
    const auth = byKind("AuthPolicy").find((p) => p.metadata.name === "ingress-with-auth");
    expect(auth?.spec.basicAuth).toEqual({
      secretRef: { name: "basic-auth" },
      realm: "Authentication Required - foo",
    });
  });

  test("what Gateway API has no field for is an HTTPRouteFilter, and every host verifies", () => {
    const filters = rt.conversion.objects.filter((o) => o.kind === "HTTPRouteFilter") as Loose[];
    expect(Object.fromEntries(filters.map((f) => [f.metadata.name, Object.keys(f.spec)]))).toEqual({
      "api-cors": ["cors"],
      "nginx-test-redirect": ["requestRedirect"],
      "rewrite-rewrite": ["urlRewrite"],
    });
    const rewrite = filters.find((f) => f.metadata.name === "rewrite-rewrite");
    expect(rewrite?.spec.urlRewrite.path.replaceRegexMatch.substitution).toBe("/$2");
    expect(rt.conversion.verified).toEqual({ hosts: 6, same: 6 });
    expect(rt.conversion.findings.filter((f) => f.kind !== "note")).toEqual([]);
  });

  describe("each request", () => {
    for (const r of requests) {
      test(r.name, async () => {
        const before = observed(await send(rt.ingress.port, r), rt.ingress);
        const after = observed(await send(rt.gateway.port, r), rt.gateway);
        if (r.differs === undefined) {
          expect(after).toEqual(before);
          return;
        }
        const said = rt.conversion.findings.filter(
          (f) => f.kind === "unconverted" && f.object.name === r.ingress,
        );
        expect(said.length).toBeGreaterThan(0);
        expect(after).not.toEqual(before);
      });
    }
  });
});
