/**
 * Three `gatehouse serve` processes share one real redis-server and one RateLimitPolicy of 100 requests
 * per 10 s (burst 100, per client address): 1,000 requests spread across them must admit between 100 and
 * 105 (GCRA refills one request per 100 ms, so a run under half a second can admit at most 4 more than
 * the burst), and the store sees at most one command per request (Redis `INFO commandstats`). A limit
 * that small is never leased (leases.ts), so it is exact; a generous one is, and costs few commands.
 * Run on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { forEachFront } from "../../helpers/fronts.ts";
import { type Fleet, startFleet } from "../../helpers/ratelimit-fleet.ts";
import { commandCalls, type RedisServer, startRedis } from "../../helpers/redis.ts";

/** Every Redis command the limiter can send for a check (EVALSHA, or EVAL when the script was flushed). */
async function scriptCalls(r: RedisServer): Promise<number> {
  return (await commandCalls(r, "evalsha")) + (await commandCalls(r, "eval"));
}

forEachFront("one RateLimitPolicy shared by 3 processes through Redis", (front) => {
  let redis: RedisServer | undefined;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    fleet = await startFleet(
      3,
      [
        { name: "api", path: "/", policy: "  rules: [{ limit: 100, window: 10s }]" },
        { name: "warm", path: "/warm" }, // unlimited: warms each process up before the measured run
        { name: "big", path: "/big", policy: "  rules: [{ limit: 1000000, window: 10s }]" },
      ],
      // A check that waits past the Redis timeout is admitted (failure mode Open, the default): on a busy
      // machine the 50 ms default would measure the timeout, not the counting.
      ["--front", front, "--redis-url", redis.url, "--redis-timeout-ms", "1000"],
    );
  }, 30_000);

  afterAll(async () => {
    await fleet?.close();
    await redis?.close();
  });

  test("3 gateway processes, one Redis, 100 per 10 s: 1,000 requests admit 100–105 (plus the refill while the run lasts)", async () => {
    const f = fleet as Fleet;
    const r = redis as RedisServer;
    // Every process must be connected to Redis before the run (the store-up gauge), or it would fail open.
    for (let i = 0; i < 3; i++) {
      const deadline = Date.now() + 5_000;
      while ((await f.metric(i, "gatehouse_ratelimit_store_up")) !== 1 && Date.now() < deadline)
        await Bun.sleep(20);
    }
    // The refill (one request per 100 ms) makes the admitted count depend on how fast the run goes, so the
    // processes are warmed up first (JIT, upstream connections) on a route without a limit.
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        for (let n = 0; n < 100; n++) await f.get(i, "/warm");
      }),
    );
    const before = await scriptCalls(r);
    const statuses = new Map<number, number>();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 48 }, async () => {
        while (next < 1000) {
          const i = next++;
          const res = await f.get(i % 3, "/x");
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      }),
    );
    const elapsedMs = performance.now() - started;
    const calls = (await scriptCalls(r)) - before;
    let checks = 0;
    for (let i = 0; i < 3; i++) checks += await f.metric(i, "gatehouse_ratelimit_store_commands_total");
    const admitted = statuses.get(200) ?? 0;
    console.log(
      `accuracy [${front} front]: ${admitted} admitted of 1000 in ${elapsedMs.toFixed(0)} ms; Redis script calls ${calls} ` +
        `(${(calls / 1000).toFixed(3)} per request, heartbeats included); limiter checks sent ${checks}`,
    );
    expect(admitted + (statuses.get(429) ?? 0)).toBe(1000);
    expect(admitted).toBeGreaterThanOrEqual(100);
    // The bucket refills one request per 100 ms while the run lasts: a slow (loaded) run may admit those.
    expect(admitted).toBeLessThanOrEqual(105 + Math.floor(elapsedMs / 100));
    // At most one command per request; and keys over the limit are cached until their retry-after, so
    // most of the 900 rejections never reach Redis.
    expect(calls).toBeLessThanOrEqual(1000);
    expect(calls).toBeLessThan(400);
  }, 30_000);

  test("under a generous limit a request costs at most one Redis command, and leases make it far fewer", async () => {
    const f = fleet as Fleet;
    const r = redis as RedisServer;
    const roundTrips = async () => {
      let n = 0;
      for (let i = 0; i < 3; i++) n += await f.metric(i, "gatehouse_ratelimit_store_round_trips_total");
      return n;
    };
    const [callsBefore, tripsBefore] = [await scriptCalls(r), await roundTrips()];
    const started = performance.now();
    let next = 0;
    let ok = 0;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        while (next < 600) {
          const i = next++;
          if ((await f.get(i % 3, "/big")).status === 200) ok++;
        }
      }),
    );
    const elapsedMs = performance.now() - started;
    const calls = (await scriptCalls(r)) - callsBefore;
    const trips = (await roundTrips()) - tripsBefore;
    console.log(
      `under the limit [${front} front]: 600 requests, ${trips} limiter round trips, ${calls} Redis script calls`,
    );
    expect(ok).toBe(600);
    // Besides the checks' round trips, only the replicas' heartbeats (one per process every 2 s) run scripts.
    const heartbeats = 3 * (Math.ceil(elapsedMs / 2_000) + 1);
    expect(calls).toBeGreaterThanOrEqual(trips);
    expect(calls).toBeLessThanOrEqual(trips + heartbeats);
    // 1,000,000 per 10 s leaves every bucket far from its limit: each process leases up to 1,024 requests at
    // a time, so 200 requests per process take a handful of round trips, not 200.
    expect(trips).toBeGreaterThanOrEqual(3);
    expect(trips).toBeLessThan(60);
  }, 30_000);
});
