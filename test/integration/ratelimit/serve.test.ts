/**
 * Rate limits in the real request path of `serve` without `--redis-url` (the embedded default: counted
 * in process): a folder of Ingresses, RateLimitPolicies and an AuthPolicy, a real echo backend and a real
 * JWKS server. Covers the responses (429 problem+json, RateLimit headers, hidden headers), a forged
 * X-Forwarded-For from an untrusted peer, keys from verified JWT claims, dry run, bad policies that must
 * become conditions without stopping anything and fail closed (their routes and those of an Ingress with
 * an unparsable `limit-*` annotation answer 500, the backend sees nothing), and a route whose limit no
 * enforcer can check (500).
 * Run on both fronts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JWKSServer, signToken, type TestKey, testKey } from "../../../src/auth/testing/keys.ts";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { type LogLevel, setLogLevel, setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { testLimit } from "../../../src/proxy/testing/guards.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import type { ObjectStatus } from "../../../src/status/types.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { rateLimitManifests, rlHost } from "../../helpers/ratelimit-fleet.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const badPolicy = (name: string, target: string, rules: string) => `---
apiVersion: gatehouse.dev/v1alpha1
kind: RateLimitPolicy
metadata: { name: ${name}, namespace: rl }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: ${target} }]
  rules: [${rules}]
`;

forEachFront("rate limits served", (front) => {
  let dir: string | undefined;
  let echo: EchoServer | undefined;
  let jwks: JWKSServer | undefined;
  let key: TestKey;
  let gw: RunningGateway | undefined;
  let base = "";
  const logs: string[] = [];
  let restoreSink: ((line: string) => void) | undefined;
  // The dry-run line is rate-limited per policy name for the whole process (enforce.ts's shadowLog, 10 s):
  // a name per front, so the second front's suite is not silenced by the first's line.
  const shadow = `shadow-${front}`;

  beforeAll(async () => {
    key = await testKey("ES256", "k1");
    jwks = new JWKSServer([key]);
    echo = startEchoServer({ service: "web" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-rl-serve-"));
    const yaml = rateLimitManifests(echo.port, [
      {
        name: "untrusted",
        path: "/untrusted",
        policy: "  clientIP: { trustedProxies: [10.0.0.0/8] }\n  rules: [{ limit: 3, window: 10s }]",
      },
      {
        name: "trusted",
        path: "/trusted",
        policy: "  clientIP: { trustedProxies: [127.0.0.1/32] }\n  rules: [{ limit: 3, window: 10s }]",
      },
      {
        name: "hidden",
        path: "/hidden",
        policy: "  hideHeaders: true\n  rules: [{ limit: 1, window: 1min }]",
      },
      { name: shadow, path: "/shadow", policy: "  shadow: true\n  rules: [{ limit: 1, window: 1min }]" },
      { name: "user", path: "/user", policy: '  rules: [{ limit: 2, window: 1min, keys: ["claim:sub"] }]' },
      { name: "keyed", path: "/keyed", policy: '  rules: [{ limit: 2, window: 1min, keys: ["claim:sub"] }]' },
      { name: "plain", path: "/plain" },
      { name: "broken", path: "/broken" },
    ]);
    const annotated = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: annotated
  namespace: rl
  annotations: { nginx.ingress.kubernetes.io/limit-rps: "lots" }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${rlHost}
      http:
        paths:
          - { path: /annotated, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
    const auth = `---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: user, namespace: rl }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: user }]
  jwt:
    providers: [{ name: p, issuer: "${jwks.url}", audiences: [api], keys: { type: RemoteJWKS, uri: "${jwks.url}/jwks" } }]
---
apiVersion: v1
kind: Secret
metadata: { name: keyed-keys, namespace: rl }
stringData: { acme: k-acme-1, globex: k-globex-1 }
---
apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: keyed, namespace: rl }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: keyed }]
  apiKeyAuth: { credentialRefs: [{ name: keyed-keys }] }
`;
    const bad = [
      badPolicy("zero", "broken", "{ limit: 0, window: 10s }"),
      badPolicy("negative", "broken", "{ limit: -1, window: 10s }"),
      badPolicy("unknown-key", "broken", '{ limit: 1, window: 10s, keys: ["cookie:session"] }'),
      badPolicy("no-target", "missing", "{ limit: 1, window: 10s }"),
    ];
    await writeFile(join(dir, "all.yaml"), yaml + annotated + auth + bad.join(""));
    restoreSink = setLogSink((line) => logs.push(line));
    const t = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--log-level", "warn", "--access-log-sample", "0"],
    );
    gw = t.gw;
    base = `http://127.0.0.1:${t.port}`;
  });

  afterAll(async () => {
    await gw?.stop();
    // `serve` sets the process-wide log level; later test files in this process expect the default.
    setLogLevel((process.env.GATEHOUSE_LOG_LEVEL as LogLevel | undefined) ?? "info");
    if (restoreSink) setLogSink(restoreSink);
    await echo?.stop();
    jwks?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function get(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(base + path, { headers: { host: rlHost, ...headers } });
    const body = await res.text();
    return { status: res.status, headers: res.headers, body };
  }

  async function statuses(path: string, n: number, headers: (i: number) => Record<string, string>) {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await get(path, headers(i))).status);
    return out;
  }

  function policyStatus(name: string): { reason: string; status: string }[] {
    const s = (gw?.state.statuses ?? []).find(
      (x: ObjectStatus) => x.target.kind === "RateLimitPolicy" && x.target.name === name,
    );
    const ancestors = (s?.status.ancestors ?? []) as { conditions: { reason: string; status: string }[] }[];
    return ancestors.flatMap((a) => a.conditions);
  }

  describe("rate limits in the request path (in-process store)", () => {
    test("allowed responses carry RateLimit headers; the 429 is problem+json with Retry-After", async () => {
      const first = await get("/untrusted/a");
      expect(first.status).toBe(200);
      expect(first.headers.get("ratelimit-policy")).toBe('"default";q=3;w=10');
      expect(first.headers.get("ratelimit")).toMatch(/^"default";r=2;t=\d+$/);
      await get("/untrusted/a");
      await get("/untrusted/a");
      const limited = await get("/untrusted/a");
      expect(limited.status).toBe(429);
      expect(limited.headers.get("content-type")).toBe("application/problem+json");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(limited.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
      expect(JSON.parse(limited.body)).toMatchObject({ status: 429, title: "Too Many Requests" });
    });

    test("a forged X-Forwarded-For from an untrusted peer is limited by the real address", async () => {
      // The bucket of 127.0.0.1 on /untrusted is already empty: no forged address gets a fresh one.
      const forged = await statuses("/untrusted/b", 5, (i) => ({ "x-forwarded-for": `203.0.113.${i}` }));
      expect(forged).toEqual([429, 429, 429, 429, 429]);
      // The same requests from a trusted proxy are keyed by the client it names (so the test can fail).
      const vouched = await statuses("/trusted", 8, (i) => ({ "x-forwarded-for": `203.0.113.${i}` }));
      expect(vouched).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
      const oneClient = await statuses("/trusted", 4, () => ({ "x-forwarded-for": "198.51.100.7" }));
      expect(oneClient).toEqual([200, 200, 200, 429]);
    });

    test("hidden headers: none on 200, only Retry-After on 429", async () => {
      const ok = await get("/hidden");
      expect(ok.status).toBe(200);
      expect(ok.headers.has("ratelimit")).toBe(false);
      expect(ok.headers.has("ratelimit-policy")).toBe(false);
      const limited = await get("/hidden");
      expect(limited.status).toBe(429);
      expect(limited.headers.has("retry-after")).toBe(true);
      expect(limited.headers.has("ratelimit")).toBe(false);
    });

    test("dry run admits everything and only reports", async () => {
      expect(await statuses("/shadow", 4, () => ({}))).toEqual([200, 200, 200, 200]);
      expect((await get("/shadow")).headers.has("ratelimit")).toBe(false);
      const text = await (gw as RunningGateway).metrics.text();
      expect(text).toContain(
        `gatehouse_ratelimit_decisions_total{policy="ratelimitpolicy/rl/${shadow}",decision="shadow"} 4`,
      );
      // Logged too, but once per policy per window, not once per request.
      const lines = logs.filter((l) => l.includes("dry run") && l.includes(`ratelimitpolicy/rl/${shadow}`));
      expect(lines.length).toBe(1);
    });

    test("key from a verified JWT claim: after auth, one bucket per subject", async () => {
      expect((await get("/user")).status).toBe(401); // auth runs first
      const token = (sub: string) => signToken(key, { iss: (jwks as JWKSServer).url, aud: "api", sub });
      const alice = { authorization: `Bearer ${await token("alice")}` };
      const bob = { authorization: `Bearer ${await token("bob")}` };
      expect(await statuses("/user", 3, () => alice)).toEqual([200, 200, 429]);
      expect(await statuses("/user", 2, () => bob)).toEqual([200, 200]);
    });

    test("an API key's name is a rate-limit key (claim:sub): a bucket per key", async () => {
      expect(await statuses("/keyed", 3, () => ({ "x-api-key": "k-acme-1" }))).toEqual([200, 200, 429]);
      expect(await statuses("/keyed", 2, () => ({ "x-api-key": "k-globex-1" }))).toEqual([200, 200]);
      expect(await statuses("/keyed", 1, () => ({}))).toEqual([401]);
    });

    test("bad policies become conditions, fail closed where they apply, and nothing stops", async () => {
      for (const name of ["zero", "negative", "unknown-key"])
        expect(policyStatus(name)).toContainEqual(
          expect.objectContaining({ status: "False", reason: "Invalid" }),
        );
      expect(policyStatus("no-target")).toContainEqual(
        expect.objectContaining({ status: "False", reason: "TargetNotFound" }),
      );
      // The invalid policies' route answers 500 problem+json naming the winner (oldest, then by name) and
      // why; the backend sees nothing.
      const seen = echo?.requests;
      for (let i = 0; i < 3; i++) {
        const refused = await get("/broken/x");
        expect(refused.status).toBe(500);
        expect(refused.headers.get("content-type")).toBe("application/problem+json");
        expect(refused.headers.has("ratelimit")).toBe(false);
        const body = JSON.parse(refused.body) as { status: number; detail: string };
        expect(body.status).toBe(500);
        expect(body.detail).toContain("ratelimitpolicy/rl/negative");
        expect(body.detail).toContain("spec.rules[0].limit: -1 must be a whole number");
      }
      // So does an Ingress whose limit-* annotation cannot be parsed.
      const annotated = await get("/annotated");
      expect(annotated.status).toBe(500);
      expect(JSON.parse(annotated.body)).toMatchObject({ status: 500 });
      expect(JSON.parse(annotated.body).detail).toContain("ingress/rl/annotated");
      expect(echo?.requests).toBe(seen);
      const text = await (gw as RunningGateway).metrics.text();
      expect(text).toContain(
        'gatehouse_ratelimit_decisions_total{policy="ratelimitpolicy/rl/negative",decision="policy_invalid"} 3',
      );
      // A route without them is served; no Degraded condition without a shared store.
      expect(await statuses("/plain", 5, () => ({}))).toEqual([200, 200, 200, 200, 200]);
      expect((echo?.requests ?? 0) - (seen ?? 0)).toBe(5);
      expect(policyStatus("trusted").map((c) => c.reason)).toEqual(["Accepted"]);
    });
  });

  test("a route with a limit but no enforcer in the process fails closed (500)", async () => {
    const upstream = startEchoServer({ service: "app" });
    const proxy = new GatewayServer({ bind: "127.0.0.1", front, guards: {} });
    try {
      const m = model(
        [
          listener([
            vhost("app.test", [
              route("limited", match("/limited"), forwardTo("app"), { rateLimit: testLimit() }),
              route("open", match("/"), forwardTo("app")),
            ]),
          ]),
        ],
        [backend("app", [upstream.port])],
      );
      await proxy.apply(m);
      const at = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
      expect((await fetch(`${at}/limited`, { headers: { host: "app.test" } })).status).toBe(500);
      expect((await fetch(`${at}/other`, { headers: { host: "app.test" } })).status).toBe(200);
    } finally {
      await proxy.stop();
      await upstream.stop();
    }
  });
});
