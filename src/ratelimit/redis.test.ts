/** The Redis store against a real redis-server: same answers as the in-process store, one call a check. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commandCalls, type RedisServer, startRedis } from "../../test/helpers/redis.ts";
import { testLimit } from "../proxy/testing/guards.ts";
import { RateLimitEnforcer } from "./enforce.ts";
import { LocalLimiter } from "./local.ts";
import { RedisLimiter } from "./redis.ts";

let redis: RedisServer;
let limiter: RedisLimiter;

beforeAll(async () => {
  redis = await startRedis();
  limiter = new RedisLimiter({ url: redis.url });
  const deadline = Date.now() + 3_000;
  while (!limiter.isUp() && Date.now() < deadline) await Bun.sleep(10);
});

afterAll(async () => {
  await limiter?.close();
  await redis?.close();
});

describe("RedisLimiter", () => {
  test("decides like the in-process store (same GCRA, rejected requests uncounted)", async () => {
    const local = new LocalLimiter();
    const items = [
      { key: "gatehouse:rl:{parity}:a", intervalMs: 1_000, burst: 3 },
      { key: "gatehouse:rl:{parity}:b", intervalMs: 100, burst: 5 },
    ];
    for (let i = 0; i < 6; i++) {
      const [r, l] = [await limiter.check(items), local.checkNow(items)];
      expect(r.allowed).toBe(l.allowed);
      expect(r.items.map((x) => x.remaining)).toEqual(l.items.map((x) => x.remaining));
      for (const [j, x] of r.items.entries())
        expect(Math.abs(x.retryAfterMs - (l.items[j]?.retryAfterMs ?? 0))).toBeLessThan(50);
    }
  });

  test("one EVALSHA per check, and it survives SCRIPT FLUSH (EVAL fallback)", async () => {
    const before = await commandCalls(redis, "evalsha");
    for (let i = 0; i < 20; i++)
      await limiter.check([{ key: `gatehouse:rl:{one}:${i}`, intervalMs: 1, burst: 1 }]);
    expect((await commandCalls(redis, "evalsha")) - before).toBeGreaterThanOrEqual(20);
    expect((await commandCalls(redis, "evalsha")) - before).toBeLessThanOrEqual(21); // + a heartbeat at most
    await redis.command("SCRIPT", "FLUSH");
    expect((await limiter.check([{ key: "gatehouse:rl:{f}", intervalMs: 1, burst: 1 }])).allowed).toBe(true);
  });

  test("keys over their limit are rejected from memory until retry-after: no round trip", async () => {
    const e = new RateLimitEnforcer({ limiter });
    const limit = testLimit({
      bucket: "cache",
      rules: [{ name: "default", limit: 1, windowSeconds: 60, burst: 1, keys: [{ source: "ClientIP" }] }],
    });
    const ctx = { clientIp: "1.2.3.4", header: () => null, method: "GET", path: "/", routeName: "r" };
    expect((await e.check(limit, ctx)).allowed).toBe(true);
    expect((await e.check(limit, ctx)).allowed).toBe(false);
    const sent = limiter.stats().commands;
    for (let i = 0; i < 50; i++) {
      const r = await e.check(limit, ctx);
      if (r.allowed) throw new Error("admitted over the limit");
      expect(Number(r.response.headers.get("retry-after"))).toBeGreaterThan(50);
    }
    expect(limiter.stats().commands).toBe(sent);
  });
});

describe("RedisLimiter batches and leases", () => {
  test("checks asked in one turn share one script call and are decided in the order asked", async () => {
    const items = [{ key: "gatehouse:rl:{batch}:a", intervalMs: 60_000, burst: 3 }];
    const before = await commandCalls(redis, "evalsha");
    const results = await Promise.all(Array.from({ length: 8 }, () => limiter.check(items)));
    const calls = (await commandCalls(redis, "evalsha")) - before;
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false, false, false, false]);
    expect(results.map((r) => r.items[0]?.remaining)).toEqual([2, 1, 0, 0, 0, 0, 0, 0]);
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(2); // + a heartbeat at most
  });

  test("a bucket far from its limit is leased: few round trips, never more admitted than the burst", async () => {
    // 2,000 per minute, burst 2,000: refills one request per 30 ms, so a quick run admits the burst and
    // a few more, and every request past that is refused however many were leased.
    const items = [{ key: "gatehouse:rl:{lease}:a", intervalMs: 30, burst: 2_000 }];
    const tripsBefore = limiter.stats().roundTrips;
    const started = performance.now();
    let admitted = 0;
    for (let i = 0; i < 2_600; i++) if ((await limiter.check(items)).allowed) admitted++;
    const refill = Math.ceil((performance.now() - started) / 30) + 1;
    const trips = limiter.stats().roundTrips - tripsBefore;
    console.log(`leases: 2,600 checks, ${admitted} admitted, ${trips} round trips`);
    expect(admitted).toBeLessThanOrEqual(2_000 + refill);
    // What a lease holds when the run ends is lost at most: 1/8 of what was left when it was taken.
    expect(admitted).toBeGreaterThanOrEqual(2_000 - 250);
    // Far from the limit each round trip leases up to 1/8 of what is left; near it, requests go to Redis
    // one by one.
    expect(trips).toBeLessThan(900);
    expect(trips).toBeGreaterThan(8);
  });

  test("with leases off every check is a round trip", async () => {
    const exact = new RedisLimiter({ url: redis.url, leases: false });
    try {
      const deadline = Date.now() + 3_000;
      while (!exact.isUp() && Date.now() < deadline) await Bun.sleep(10);
      const items = [{ key: "gatehouse:rl:{exact}:a", intervalMs: 1, burst: 1_000_000 }];
      for (let i = 0; i < 50; i++) expect((await exact.check(items)).allowed).toBe(true);
      expect(exact.stats().roundTrips).toBe(50);
    } finally {
      await exact.close();
    }
  });
});

test("a bad URL fails at construction with a readable message", () => {
  expect(() => new RedisLimiter({ url: "memcached://x" })).toThrow(/--redis-url/);
});
