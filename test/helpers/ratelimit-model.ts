import type { RateLimitRule, RouteRateLimit } from "../../src/model/index.ts";

/** A RouteRateLimit for tests: one client-IP rule unless rules are given, defaults elsewhere. */
export function testLimit(
  overrides: Partial<RouteRateLimit> & { rules?: RateLimitRule[] } = {},
): RouteRateLimit {
  return {
    source: { kind: "RateLimitPolicy", namespace: "default", name: "test" },
    policy: "ratelimitpolicy/default/test",
    bucket: "ratelimitpolicy/default/test/test/route",
    rules: [{ name: "default", limit: 100, windowSeconds: 10, burst: 100, keys: [{ source: "ClientIP" }] }],
    clientIP: { trustedProxies: [] },
    exemptCIDRs: [],
    failureMode: "Open",
    shadow: false,
    hideHeaders: false,
    ...overrides,
  };
}
