/**
 * Redis fails under load behind two real `gatehouse serve` processes: killed (connections drop), then
 * back, then hung (SIGSTOP: nothing answers). Each failure mode must do what it says (Open admits and
 * counts it, Closed answers 503, Local limits at limit / live replicas), no request may wait much longer
 * than the command timeout (added p99 < 60 ms), the degraded state must show in the metrics and in the
 * policy's `Degraded` condition, and limits must resume through Redis once it is back. Run on both
 * fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { forEachFront } from "../../helpers/fronts.ts";
import { degradedStatus, type Fleet, p99, startFleet } from "../../helpers/ratelimit-fleet.ts";
import { type RedisServer, startRedis } from "../../helpers/redis.ts";

const big = "  rules: [{ limit: 1000000, window: 10s }]";
async function until(what: string, ok: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/**
 * Drive the three big-limit routes on both gateways for `ms` with 6 clients; `during` runs `atMs` in.
 * `firedAt` is when `during` had done its work (a busy machine may run it late), `ms` from the start.
 */
async function load(f: Fleet, ms: number, atMs = 0, during?: () => void | Promise<void>) {
  const samples: { path: string; status: number; ms: number; t: number }[] = [];
  const start = performance.now();
  const paths = ["/open", "/closed", "/local"];
  let i = 0;
  let firedAt = Number.POSITIVE_INFINITY;
  const fire =
    atMs > 0 && during
      ? Bun.sleep(atMs)
          .then(during)
          .then(() => {
            firedAt = performance.now() - start;
          })
      : Promise.resolve();
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (performance.now() - start < ms) {
        const n = i++;
        const path = paths[n % 3] as string;
        const t0 = performance.now();
        const res = await f.get(Math.floor(n / 3) % 2, path);
        samples.push({ path, status: res.status, ms: performance.now() - t0, t: t0 - start });
      }
    }),
  );
  await fire;
  return Object.assign(samples, { firedAt });
}

/** 20 requests for one client of the 10-per-10-s route, spread over `gateways`; how many were admitted. */
async function smallRun(f: Fleet, client: string, gateways: number[]): Promise<number> {
  let ok = 0;
  for (let i = 0; i < 20; i++) {
    const res = await f.get(gateways[i % gateways.length] as number, "/local-small", { "x-client": client });
    if (res.status === 200) ok++;
  }
  return ok;
}

const decisions = (policy: string, decision: string) =>
  `gatehouse_ratelimit_decisions_total{policy="ratelimitpolicy/rl/${policy}",decision="${decision}"}`;

forEachFront("Redis failures behind 2 processes", (front) => {
  let redis: RedisServer | undefined;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    fleet = await startFleet(
      2,
      [
        { name: "open", path: "/open", policy: `  failureMode: open\n${big}` },
        { name: "closed", path: "/closed", policy: `  failureMode: closed\n${big}` },
        { name: "local", path: "/local", policy: `  failureMode: local\n${big}` },
        {
          name: "local-small",
          path: "/local-small",
          policy: '  failureMode: local\n  rules: [{ limit: 10, window: 10s, keys: ["header:x-client"] }]',
        },
      ],
      ["--front", front, "--redis-url", redis.url, "--redis-timeout-ms", "50"],
    );
  }, 30_000);

  afterAll(async () => {
    await fleet?.close();
    await redis?.close();
  });

  test("failure modes: Redis killed, then back, then hung", async () => {
    const f = fleet as Fleet;
    const r = redis as RedisServer;
    // Both replicas announced themselves (failure mode Local divides by this count).
    for (const i of [0, 1])
      await until("2 replicas", async () => (await f.metric(i, "gatehouse_ratelimit_store_replicas")) === 2);

    await load(f, 300); // warm-up (JIT, connections), not measured
    const baseline = await load(f, 600);
    // Open and Local never refuse; Closed refuses only when a check misses the 50 ms deadline, which an
    // overloaded 2-core machine can cause now and then (Redis is then skipped for 100 ms): rare, not none.
    const refused = baseline.filter((s) => s.status !== 200);
    expect(refused.filter((s) => s.path !== "/closed" || s.status !== 503)).toEqual([]);
    expect(refused.length).toBeLessThan(baseline.filter((s) => s.path === "/closed").length / 2);
    const baseP99 = p99(baseline.map((s) => s.ms));

    // Killed mid-run: after it, Open admits, Closed answers 503, Local admits (far below its share).
    const killed = await load(f, 1_000, 300, () => r.stop());
    const after = killed.filter((s) => s.t > killed.firedAt + 50);
    const statusesOf = (path: string) => [
      ...new Set(after.filter((s) => s.path === path).map((s) => s.status)),
    ];
    expect(statusesOf("/open")).toEqual([200]);
    expect(statusesOf("/closed")).toEqual([503]);
    expect(statusesOf("/local")).toEqual([200]);
    const killedP99 = p99(killed.map((s) => s.ms));
    for (const i of [0, 1]) {
      expect(await f.metric(i, "gatehouse_ratelimit_store_up")).toBe(0);
      expect(await f.metric(i, decisions("open", "failed_open"))).toBeGreaterThan(0);
      expect(await f.metric(i, decisions("closed", "failed_closed"))).toBeGreaterThan(0);
      expect(await f.metric(i, decisions("local", "local_allowed"))).toBeGreaterThan(0);
    }
    // The degraded state: a metric per policy and the policy's Degraded condition (next health tick).
    await until("Degraded=True", async () => (await degradedStatus(f, 0, "closed")) === "True");
    expect(await f.metric(0, 'gatehouse_ratelimit_degraded{policy="ratelimitpolicy/rl/open"}')).toBe(1);
    // Local: 10 per 10 s shared by 2 live replicas → 5 on one replica.
    expect(await smallRun(f, "a", [0])).toBe(5);

    // Back: limits resume through Redis by themselves (the full 10 across both replicas for a fresh
    // client, not 5 each), and Closed admits again.
    await r.start();
    for (const i of [0, 1])
      await until("store up", async () => (await f.metric(i, "gatehouse_ratelimit_store_up")) === 1);
    expect(await smallRun(f, "b", [0, 1])).toBe(10);
    expect((await f.get(0, "/closed")).status).toBe(200);
    expect(Number((await r.command("DBSIZE")).slice(1))).toBeGreaterThan(0);

    // Hung: commands time out after 50 ms, then Redis is skipped for a while, so few requests wait.
    const hung = await load(f, 1_000, 300, () => r.pause());
    r.resume();
    const hungAfter = hung.filter((s) => s.t > hung.firedAt + 100);
    expect(hungAfter.filter((s) => s.path === "/closed").some((s) => s.status === 503)).toBe(true);
    expect(hungAfter.filter((s) => s.path === "/open").every((s) => s.status === 200)).toBe(true);
    const hungP99 = p99(hung.map((s) => s.ms));
    const hungMax = Math.max(...hung.map((s) => s.ms));
    console.log(
      `failure p99 ms [${front} front]: baseline ${baseP99.toFixed(1)}, killed ${killedP99.toFixed(1)} ` +
        `(+${(killedP99 - baseP99).toFixed(1)}), hung ${hungP99.toFixed(1)} (+${(hungP99 - baseP99).toFixed(1)}, ` +
        `max ${hungMax.toFixed(1)}); requests ${baseline.length}/${killed.length}/${hung.length}; ` +
        `baseline Closed refusals ${refused.length}`,
    );
    expect(killedP99 - baseP99).toBeLessThan(60);
    expect(hungP99 - baseP99).toBeLessThan(60);
  }, 40_000);
});
