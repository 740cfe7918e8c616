/**
 * ingress-nginx's `global-rate-limit*` annotations served by two `gatehouse serve` processes that share
 * one real redis-server, requests alternating between them: N per window across both (the N+1th inside
 * the window refused with 429), a client in `global-rate-limit-ignored-cidrs` never limited, a
 * `global-rate-limit-key` of a header giving each API client its own count, and beside `limit-rpm` a
 * `limit-allowlist` that exempts from `limit-rpm` only. Run on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { forEachFront } from "../../helpers/fronts.ts";
import { type Fleet, startFleet } from "../../helpers/ratelimit-fleet.ts";
import { type RedisServer, startRedis } from "../../helpers/redis.ts";

forEachFront("global-rate-limit annotations, two processes sharing Redis", (front) => {
  let redis: RedisServer | undefined;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    const perMinute = (n: number, more: Record<string, string> = {}) => ({
      "global-rate-limit": String(n),
      "global-rate-limit-window": "1m",
      ...more,
    });
    fleet = await startFleet(
      2,
      [
        { name: "global", path: "/global", annotations: perMinute(3) },
        {
          name: "ignored",
          path: "/ignored",
          annotations: perMinute(1, { "global-rate-limit-ignored-cidrs": "10.0.0.0/8, 127.0.0.0/8" }),
        },
        {
          name: "not-ignored",
          path: "/not-ignored",
          annotations: perMinute(1, { "global-rate-limit-ignored-cidrs": "10.0.0.0/8" }),
        },
        {
          name: "by-client",
          path: "/by-client",
          annotations: perMinute(2, { "global-rate-limit-key": "$http_x_api_client" }),
        },
        {
          name: "both",
          path: "/both",
          annotations: perMinute(2, {
            "limit-rpm": "1",
            "limit-burst-multiplier": "1",
            "limit-allowlist": "127.0.0.0/8",
          }),
        },
      ],
      ["--front", front, "--redis-url", redis.url],
    );
    // Every process must count in Redis before the test (the store-up gauge), or it would count alone.
    for (let i = 0; i < 2; i++) {
      const deadline = Date.now() + 5_000;
      while ((await fleet.metric(i, "gatehouse_ratelimit_store_up")) !== 1 && Date.now() < deadline)
        await Bun.sleep(20);
    }
  }, 30_000);

  afterAll(async () => {
    await fleet?.close();
    await redis?.close();
  });

  /** `n` GETs of `path`, alternating between the two gateways; their statuses. */
  async function statuses(path: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await (fleet as Fleet).get(i % 2, path, headers)).status);
    return out;
  }

  test("N per window across both processes: the N+1th inside the window is refused with 429", async () => {
    const f = fleet as Fleet;
    const ok = await f.get(0, "/global");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-policy")).toBe('"global";q=3;w=60');
    expect(await statuses("/global", 2)).toEqual([200, 200]);
    const refused = await f.get(1, "/global");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("ratelimit")).toMatch(/^"global";r=0;t=\d+$/);
    expect((await f.get(0, "/global")).status).toBe(429);
  });

  test("a client in global-rate-limit-ignored-cidrs is neither counted nor limited", async () => {
    expect(await statuses("/ignored", 6)).toEqual([200, 200, 200, 200, 200, 200]);
    // The same limit without 127.0.0.0/8 among the ignored ranges limits this client.
    expect(await statuses("/not-ignored", 3)).toEqual([200, 429, 429]);
  });

  test("a key of $http_x_api_client counts each API client apart, across both processes", async () => {
    const a = { "x-api-client": "a" };
    expect(await statuses("/by-client", 3, a)).toEqual([200, 200, 429]);
    expect(await statuses("/by-client", 3, { "x-api-client": "b" })).toEqual([200, 200, 429]);
    // A request without the header counts as its client address, in a bucket of its own.
    expect(await statuses("/by-client", 3)).toEqual([200, 200, 429]);
    expect(await statuses("/by-client", 1, a)).toEqual([429]);
  });

  test("beside limit-rpm, limit-allowlist exempts from limit-rpm only, not from the global limit", async () => {
    // limit-rpm alone would refuse the 2nd request; the allowlist lifts it, the global limit (2) stays.
    expect(await statuses("/both", 4)).toEqual([200, 200, 429, 429]);
  });
});
