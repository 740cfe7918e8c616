import { expect, test } from "bun:test";
import { testLimit } from "../proxy/testing/guards.ts";
import { policyHeader, rateLimitHeader, retryAfterSeconds, tooManyRequests } from "./headers.ts";

const limit = testLimit({
  rules: [
    { name: "default", limit: 100, windowSeconds: 10, burst: 100, keys: [] },
    { name: "rps", limit: 10, windowSeconds: 1, burst: 50, keys: [] },
  ],
});

test("RateLimit-Policy: quota = burst, window = time to refill it", () => {
  expect(policyHeader(limit)).toBe('"default";q=100;w=10, "rps";q=50;w=5');
});

test("RateLimit: remaining and seconds until full, per rule", () => {
  const results = [
    { remaining: 42, resetMs: 5_800, retryAfterMs: 0 },
    { remaining: 0, resetMs: 5_000, retryAfterMs: 100 },
  ];
  expect(rateLimitHeader(limit, results)).toBe('"default";r=42;t=6, "rps";r=0;t=5');
});

test("429: Retry-After rounded up (at least 1), problem+json body", async () => {
  expect(retryAfterSeconds(1)).toBe(1);
  expect(retryAfterSeconds(1001)).toBe(2);
  const res = tooManyRequests(2_500, [["ratelimit", '"default";r=0;t=3']]);
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe("3");
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("ratelimit")).toBe('"default";r=0;t=3');
  expect(await res.json()).toMatchObject({ status: 429, title: "Too Many Requests" });
});
