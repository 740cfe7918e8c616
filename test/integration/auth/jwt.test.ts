/**
 * JWT authentication end to end with real parts: AuthPolicies translated by the real `translate`, a real
 * JWKS server on loopback, real ES256/RS256/EdDSA tokens, and a tiny `Bun.serve` standing in for the
 * proxy hook: it finds the route, calls `AuthEnforcer.check`, removes and sets the headers it is told
 * to, and echoes what the upstream would receive.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { exportSPKI, SignJWT } from "jose";
import { AuthEnforcer, type AuthOutcome } from "../../../src/auth/enforce.ts";
import { JWKSServer, signToken, type TestKey, testKey } from "../../../src/auth/testing/keys.ts";
import type { Route } from "../../../src/model/index.ts";
import { GatewayMetrics } from "../../../src/observability/metrics.ts";
import { translate } from "../../../src/translate/translate.ts";
import { loadCase } from "../../golden/load.ts";

let jwks: JWKSServer;
let ec: TestKey;
let ed: TestKey;
let rsa: TestKey;
let enforcer: AuthEnforcer;
let gateway: ReturnType<typeof Bun.serve>;
let routes: Map<string, Route>;
const metrics = new GatewayMetrics({ processMetrics: false });

function ingress(name: string, annotation?: string): string {
  const ann = annotation ? `\n  annotations: { gatehouse.dev/auth-policy: ${annotation} }` : "";
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: default${ann}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${name}.test
      http:
        paths: [{ path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }]
---
`;
}

function policies(issuer: string): string {
  const provider = (uri: string) =>
    `providers: [{ name: p, issuer: "${issuer}", audiences: [api], keys: { type: RemoteJWKS, uri: "${uri}" } }]`;
  return `apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: api-jwt, namespace: default }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: other }]
  jwt: { ${provider(`${issuer}/jwks`)} }
  claimToHeaders: [{ claim: sub, header: X-User }, { claim: org.id, header: X-Org }]
---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: admin, namespace: default }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: admin }]
  jwt: { ${provider(`${issuer}/jwks`)} }
  authorization: { requiredScopes: [admin], requiredClaims: [{ name: groups, values: [ops] }] }
---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: broken, namespace: default }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: broken }]
---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: down, namespace: default }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: down }]
  jwt: { ${provider("http://127.0.0.1:9/jwks")} }
`;
}

beforeAll(async () => {
  [ec, ed, rsa] = await Promise.all([
    testKey("ES256", "ec"),
    testKey("EdDSA", "ed"),
    testKey("RS256", "rsa"),
  ]);
  jwks = new JWKSServer([ec, ed, rsa]);
  const yaml = [
    ingress("api", "api-jwt"),
    ingress("admin"),
    ingress("broken"),
    ingress("down"),
    ingress("open"),
    policies(jwks.url),
  ].join("");
  const loaded = loadCase(yaml);
  expect(loaded.problems).toEqual([]);
  const { model } = translate(loaded.snapshot);
  routes = new Map();
  for (const vh of model.listeners[0]?.virtualHosts ?? [])
    if (vh.routes[0]) routes.set(vh.hostname, vh.routes[0]);
  enforcer = new AuthEnforcer({ metrics, keys: { timeoutMs: 300 } });
  enforcer.update(model);
  await enforcer.ready();
  gateway = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: standIn });
});
afterAll(() => {
  enforcer.close();
  gateway.stop(true);
  jwks.stop();
});

/** The proxy hook as the lead will write it: check, then header edits, then forward (here: echo). */
async function standIn(req: Request): Promise<Response> {
  const u = new URL(req.url);
  const host = (req.headers.get("host") ?? "").replace(/:\d+$/, "");
  const route = routes.get(host);
  if (!route) return new Response("no route", { status: 404 });
  const headers = new Headers(req.headers);
  if (route.auth) {
    const url = { path: u.pathname, query: u.search.slice(1), host, scheme: "http" as const };
    const outcome: AuthOutcome = await enforcer.check(route.auth, req, url);
    if (!outcome.ok) return outcome.response;
    for (const name of outcome.removeHeaders) headers.delete(name);
    for (const [name, value] of outcome.setHeaders) headers.set(name, value);
  }
  return Response.json(Object.fromEntries(headers));
}

const get = (host: string, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${gateway.port}/`, { headers: { host, ...headers } });
const claims = { iss: "", aud: "api", sub: "alice" };
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

// One run only: the gateway is a Bun.serve stand-in for the proxy hook, not a Gatehouse listener.
describe("enforcer behind a Bun.serve stand-in", () => {
  test("no token: 401 with a bare Bearer challenge (RFC 6750 §3.1)", async () => {
    const res = await get("api.test");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="default/api-jwt"');
  });

  test("valid token: forwarded with claim headers; spoofed ones removed", async () => {
    const token = await signToken(ec, { ...claims, iss: jwks.url });
    const res = await get("api.test", { ...bearer(token), "x-user": "mallory", "x-org": "evil" });
    expect(res.status).toBe(200);
    const seen = (await res.json()) as Record<string, string>;
    expect(seen["x-user"]).toBe("alice");
    expect(seen["x-org"]).toBeUndefined(); // no org claim: the client's value is still gone
  });

  test("invalid token: 401 invalid_token; EdDSA token with nested claim passes", async () => {
    const bad = await signToken(ec, { ...claims, iss: jwks.url, aud: "other" });
    const res = await get("api.test", bearer(bad));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const good = await signToken(ed, { ...claims, iss: jwks.url, org: { id: 42 } });
    const ok = await get("api.test", bearer(good));
    expect(((await ok.json()) as Record<string, string>)["x-org"]).toBe("42");
  });

  test("authorization: 403 insufficient_scope without the scope or claim, 200 with both", async () => {
    const noScope = await signToken(ec, { ...claims, iss: jwks.url, groups: ["ops"] });
    const r1 = await get("admin.test", bearer(noScope));
    expect(r1.status).toBe(403);
    expect(r1.headers.get("www-authenticate")).toBe(
      'Bearer realm="default/admin", error="insufficient_scope", scope="admin"',
    );
    const wrongGroup = await signToken(ec, { ...claims, iss: jwks.url, scope: "admin", groups: ["dev"] });
    expect((await get("admin.test", bearer(wrongGroup))).status).toBe(403);
    const ok = await signToken(ec, { ...claims, iss: jwks.url, scope: "read admin", groups: ["dev", "ops"] });
    expect((await get("admin.test", bearer(ok))).status).toBe(200);
  });

  test("fail closed: a policy with no provider and an unreachable JWKS both answer 401", async () => {
    const token = await signToken(ec, { ...claims, iss: jwks.url });
    expect((await get("broken.test", bearer(token))).status).toBe(401);
    expect((await get("down.test", bearer(token))).status).toBe(401);
    expect((await get("open.test")).status).toBe(200);
    expect(enforcer.keySets().find((k) => k.location.includes(":9/"))?.hasKeys).toBe(false);
  });

  test("attacks over the wire: alg none, 8 KB token, token in the query (not enabled)", async () => {
    const none = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(
      JSON.stringify({ ...claims, iss: jwks.url, exp: 9e9 }),
    ).toString("base64url")}.`;
    expect((await get("api.test", bearer(none))).status).toBe(401);
    const big = await signToken(ec, { ...claims, iss: jwks.url, pad: "x".repeat(9000) });
    expect((await get("api.test", bearer(big))).status).toBe(401);
    const token = await signToken(ec, { ...claims, iss: jwks.url });
    const res = await fetch(`http://127.0.0.1:${gateway.port}/?access_token=${token}`, {
      headers: { host: "api.test" },
    });
    expect(res.status).toBe(401);
  });

  test("the attack matrix over the wire, RS256 keys from the JWKS server: each a 401 invalid_token", async () => {
    const iss = jwks.url;
    const now = Math.floor(Date.now() / 1000);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const valid = await signToken(rsa, { ...claims, iss });
    expect((await get("api.test", bearer(valid))).status).toBe(200);
    const head = `${b64({ alg: "HS256", typ: "JWT", kid: "rsa" })}.${b64({ ...claims, iss, exp: now + 60 })}`;
    const hmac = createHmac("sha256", await exportSPKI(rsa.publicKey))
      .update(head)
      .digest("base64url");
    const [h, p, sig] = valid.split(".");
    let attackerHits = 0;
    const counting = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        attackerHits++;
        return new Response("", { status: 404 });
      },
    });
    try {
      const stranger = await testKey("RS256", "who");
      const attacks: Record<string, string> = {
        "HS256 with the RSA public key": `${head}.${hmac}`,
        "missing exp": await new SignJWT({ ...claims, iss })
          .setProtectedHeader({ alg: "RS256", kid: "rsa" })
          .sign(rsa.privateKey),
        expired: await signToken(rsa, { ...claims, iss, exp: now - 3600 }),
        "nbf in the future": await signToken(rsa, { ...claims, iss, nbf: now + 600 }),
        "wrong iss": await signToken(rsa, { ...claims, iss: "https://evil.test" }),
        "wrong aud": await signToken(rsa, { ...claims, iss, aud: "other" }),
        "unknown kid": await signToken(stranger, { ...claims, iss }),
        "malformed base64": `${h}.${p}!.${sig}`,
        "jku elsewhere": await signToken(
          rsa,
          { ...claims, iss },
          { jku: `http://127.0.0.1:${counting.port}/jwks` },
        ),
        "x5u elsewhere": await signToken(
          rsa,
          { ...claims, iss },
          { x5u: `http://127.0.0.1:${counting.port}/c` },
        ),
      };
      for (const [name, token] of Object.entries(attacks)) {
        const res = await get("api.test", bearer(token));
        expect([name, res.status]).toEqual([name, 401]);
        expect([name, res.headers.get("www-authenticate")]).toEqual([
          name,
          expect.stringContaining('error="invalid_token"'),
        ]);
      }
      expect(attackerHits).toBe(0);
    } finally {
      counting.stop(true);
    }
  });

  test("a repeated token is answered synchronously with the same frozen outcome", async () => {
    const route = routes.get("api.test") as Route;
    const token = await signToken(ec, { ...claims, iss: jwks.url, sub: "bob" });
    const req = () => new Request("http://api.test/", { headers: bearer(token) });
    const url = { path: "/", query: "", host: "api.test", scheme: "http" as const };
    const first = await enforcer.check(route.auth as NonNullable<Route["auth"]>, req(), url);
    const second = enforcer.check(route.auth as NonNullable<Route["auth"]>, req(), url);
    expect(second instanceof Promise).toBe(false);
    expect(second).toBe(first);
    expect(first.ok && first.identity.sub).toBe("bob");
    expect(first.ok && Object.isFrozen(first.identity)).toBe(true);
  });

  test("failures are counted by reason", async () => {
    const text = await metrics.text();
    expect(text).toMatch(/gatehouse_auth_failures_total\{reason="missing_token"\} [1-9]/);
    expect(text).toMatch(/gatehouse_auth_failures_total\{reason="forbidden"\} [1-9]/);
    expect(text).toMatch(/gatehouse_auth_failures_total\{reason="policy_invalid"\} [1-9]/);
    expect(text).toMatch(/gatehouse_auth_failures_total\{reason="keys_unavailable"\} [1-9]/);
  });
});
