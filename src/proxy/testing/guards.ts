/**
 * Edge guards for proxy tests: a route's JWT AuthPolicy (one provider, ES256 with the test key, scope
 * `read`, `sub` sent as `x-user`) and a rate limit of `n` per hour in one bucket.
 */
import type { TestKey } from "../../auth/testing/keys.ts";
import type { RateLimitRule, RouteAuth, RouteRateLimit } from "../../model/index.ts";

/** The issuer the JWT guard trusts (sign test tokens with it). */
export const TEST_ISSUER = "https://issuer.fast.test";

export function jwtGuard(key: TestKey, extra: Partial<RouteAuth> = {}): RouteAuth {
  return {
    policy: { kind: "AuthPolicy", namespace: "test", name: "jwt" },
    jwt: {
      providers: [
        {
          name: "main",
          issuer: TEST_ISSUER,
          audiences: ["api"],
          audienceCheck: true,
          keys: { type: "Inline", jwks: JSON.stringify({ keys: [key.publicJwk] }) },
          algorithms: ["ES256"],
          clockSkewSeconds: 30,
        },
      ],
      tokenSources: [{ type: "Header", name: "authorization", prefix: "Bearer " }],
    },
    authorization: { requiredScopes: ["read"], requiredClaims: [] },
    claimToHeaders: [{ claim: "sub", header: "x-user" }],
    ...extra,
  };
}

/** A RouteRateLimit for tests: one client-IP rule of 100 per 10 s unless rules are given, defaults elsewhere. */
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

/** `n` per hour keyed by `keys`, in its own bucket. */
export function rateLimitGuard(
  n: number,
  keys: RouteRateLimit["rules"][number]["keys"],
  bucket: string,
): RouteRateLimit {
  return testLimit({
    source: { kind: "RateLimitPolicy", namespace: "test", name: bucket },
    policy: `ratelimitpolicy/test/${bucket}`,
    bucket,
    rules: [{ name: "default", limit: n, windowSeconds: 3600, burst: n, keys }],
  });
}
