import { describe, expect, test } from "bun:test";
import { GatewayMetrics } from "../observability/metrics.ts";
import { testLimit } from "../proxy/testing/guards.ts";
import { type RateLimitContext, RateLimitEnforcer } from "./enforce.ts";
import { LocalLimiter } from "./local.ts";

const ctx = (clientIp = "198.51.100.7", headers: Record<string, string> = {}): RateLimitContext => ({
  clientIp,
  header: (n) => headers[n] ?? null,
  method: "GET",
  path: "/",
  routeName: "r",
});

const small = [
  { name: "default", limit: 2, windowSeconds: 10, burst: 2, keys: [{ source: "ClientIP" as const }] },
];

describe("RateLimitEnforcer with the in-process store", () => {
  test("admits with RateLimit headers, then answers 429 with Retry-After and problem+json", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter(), metrics });
    const limit = testLimit({ rules: small });
    const first = await e.check(limit, ctx());
    expect(first).toEqual({
      allowed: true,
      headers: [
        ["ratelimit-policy", '"default";q=2;w=10'],
        ["ratelimit", '"default";r=1;t=5'],
      ],
    });
    await e.check(limit, ctx());
    const third = await e.check(limit, ctx());
    if (third.allowed) throw new Error("expected a 429");
    expect(third.response.status).toBe(429);
    expect(third.response.headers.get("retry-after")).toBe("5");
    expect(third.response.headers.get("ratelimit")).toBe('"default";r=0;t=10');
    expect(((await third.response.json()) as { status: number }).status).toBe(429);
    // another client has its own bucket
    expect((await e.check(limit, ctx("198.51.100.8"))).allowed).toBe(true);
    const text = await metrics.text();
    expect(text).toContain(
      'gatehouse_ratelimit_decisions_total{policy="ratelimitpolicy/default/test",decision="allowed"} 3',
    );
    expect(text).toContain('decision="limited"} 1');
    expect(text).toContain("gatehouse_ratelimit_store_up 1");
  });

  test("hidden headers: none on admitted requests, only Retry-After on the 429", async () => {
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter() });
    const limit = testLimit({ rules: small, hideHeaders: true });
    expect(await e.check(limit, ctx())).toEqual({ allowed: true });
    await e.check(limit, ctx());
    const r = await e.check(limit, ctx());
    if (r.allowed) throw new Error("expected a 429");
    expect(r.response.headers.get("retry-after")).not.toBeNull();
    expect(r.response.headers.get("ratelimit")).toBeNull();
    expect(r.response.headers.get("ratelimit-policy")).toBeNull();
  });

  test("shadow mode admits everything and only counts", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter(), metrics });
    const limit = testLimit({ rules: small, shadow: true });
    for (let i = 0; i < 5; i++) expect(await e.check(limit, ctx())).toEqual({ allowed: true });
    expect(await metrics.text()).toContain('decision="shadow"} 3');
  });

  test("a limit marked invalid answers 500 problem+json naming the policy, for everyone, and counts", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter(), metrics });
    const limit = testLimit({ rules: [], invalid: "spec.rules[0].limit: 0 must be a whole number" });
    for (const ip of ["198.51.100.7", "10.1.1.1"]) {
      const r = e.check(limit, ctx(ip));
      // Decided without the store: synchronous, as the raw front's fast path expects.
      if (r instanceof Promise || r.allowed) throw new Error("expected a synchronous refusal");
      expect(r.response.status).toBe(500);
      expect(r.response.headers.get("content-type")).toBe("application/problem+json");
      expect(r.response.headers.get("ratelimit")).toBeNull();
      const body = (await r.response.json()) as { status: number; detail: string };
      expect(body.status).toBe(500);
      expect(body.detail).toContain("ratelimitpolicy/default/test");
      expect(body.detail).toContain("spec.rules[0].limit: 0 must be a whole number");
    }
    // Neither an exemption nor a dry run opens it: those settings are part of what is invalid.
    const exempt = testLimit({ rules: [], invalid: "bad", exemptCIDRs: ["10.0.0.0/8"], shadow: true });
    expect((await e.check(exempt, ctx("10.1.1.1"))).allowed).toBe(false);
    expect(await metrics.text()).toContain(
      'gatehouse_ratelimit_decisions_total{policy="ratelimitpolicy/default/test",decision="policy_invalid"} 3',
    );
  });

  test("exempt clients are neither limited nor counted", async () => {
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter() });
    const limit = testLimit({ rules: small, exemptCIDRs: ["10.0.0.0/8"] });
    for (let i = 0; i < 5; i++) expect((await e.check(limit, ctx("10.1.1.1"))).allowed).toBe(true);
  });

  test("a rule's own exempt clients skip that rule only, in the buckets everyone else counts in", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter(), metrics });
    const limit = testLimit({
      rules: [
        { name: "rps", limit: 1, windowSeconds: 60, burst: 1, keys: [{ source: "ClientIP" }] },
        {
          name: "global",
          limit: 2,
          windowSeconds: 60,
          burst: 2,
          keys: [{ source: "Header", name: "x-api-client" }],
          exemptCIDRs: ["203.0.113.0/24"],
        },
      ],
    });
    const a = { "x-api-client": "a" };
    // Exempt from `global`: only `rps` counts it (one per minute), and only `rps` shows in the headers.
    const first = await e.check(limit, ctx("203.0.113.5", a));
    expect(first).toEqual({
      allowed: true,
      headers: [
        ["ratelimit-policy", '"rps";q=1;w=60'],
        ["ratelimit", '"rps";r=0;t=60'],
      ],
    });
    expect((await e.check(limit, ctx("203.0.113.5", a))).allowed).toBe(false);
    // Client "a" was not counted by `global` above: two other addresses still get its two requests.
    expect((await e.check(limit, ctx("198.51.100.1", a))).allowed).toBe(true);
    expect((await e.check(limit, ctx("198.51.100.2", a))).allowed).toBe(true);
    const third = await e.check(limit, ctx("198.51.100.3", a));
    if (third.allowed) throw new Error("expected a 429 from the global rule");
    expect(third.response.headers.get("ratelimit")).toContain('"global";r=0');
    // Exempt from every rule: the limit's exemption, counted as such.
    const all = testLimit({ rules: limit.rules.map((r) => ({ ...r, exemptCIDRs: ["192.0.2.0/24"] })) });
    for (let i = 0; i < 3; i++) expect(await e.check(all, ctx("192.0.2.9", a))).toEqual({ allowed: true });
    expect(await metrics.text()).toContain('decision="exempt"} 3');
  });

  test("a forged X-Forwarded-For does not get a client a fresh bucket", async () => {
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter() });
    const limit = testLimit({ rules: small, clientIP: { trustedProxies: ["10.0.0.0/8"] } });
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push((await e.check(limit, ctx("203.0.113.5", { "x-forwarded-for": `1.1.1.${i}` }))).allowed);
    expect(results).toEqual([true, true, false, false]);
    // Behind a trusted proxy the forwarded address is the key.
    expect((await e.check(limit, ctx("10.0.0.2", { "x-forwarded-for": "1.1.1.1" }))).allowed).toBe(true);
  });

  test("the client the gateway resolved is the key; a policy's own trusted proxies walk again from the peer", async () => {
    const e = new RateLimitEnforcer({ limiter: new LocalLimiter() });
    // --trusted-proxies named 10.0.0.1: the client is 198.51.100.7 (what the proxy tells).
    const behind = (xff: string) => ({
      ...ctx("198.51.100.7", { "x-forwarded-for": xff }),
      peer: "10.0.0.1",
    });
    const global = testLimit({ rules: small, bucket: "global-trust" });
    const keyed = [];
    for (let i = 0; i < 3; i++)
      keyed.push((await e.check(global, behind(`9.9.9.${i}, 198.51.100.7`))).allowed);
    expect(keyed).toEqual([true, true, false]);
    // The policy trusts 10.0.0.0/8 and 198.51.100.0/24 as well: the walk goes one hop further left.
    const own = testLimit({
      rules: small,
      bucket: "own-trust",
      clientIP: { trustedProxies: ["10.0.0.0/8", "198.51.100.0/24"] },
    });
    const further = [];
    for (let i = 0; i < 3; i++)
      further.push((await e.check(own, behind(`9.9.9.${i}, 198.51.100.7`))).allowed);
    expect(further).toEqual([true, true, true]);
  });
});
