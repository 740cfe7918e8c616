/**
 * The Redis store against real Redis Cluster and Sentinel deployments (issue 7: standalone, Sentinel and
 * Cluster URLs), not only URL parsing: three `redis-server --cluster-enabled yes` masters joined by
 * `redis-cli --cluster create`, and one master watched by one `redis-server --sentinel`. Checks asked in
 * one event-loop turn for clients on different nodes must each be decided (a batch that mixed hash
 * tags would fail with CROSSSLOT), limits hold per client, and leases work across nodes.
 * One front only: the checks go straight to a RedisLimiter, no request crosses a listener.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyPrefix } from "../../../src/ratelimit/keys.ts";
import type { LimitItem } from "../../../src/ratelimit/limiter.ts";
import { RedisLimiter } from "../../../src/ratelimit/redis.ts";
import { freePort } from "../../helpers/ports.ts";
import { redisServerPath } from "../../helpers/redis.ts";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-redis-topologies-"));
const procs: Bun.Subprocess[] = [];

function spawn(args: string[]): Bun.Subprocess {
  const p = Bun.spawn(args, { cwd: dir, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  procs.push(p);
  return p;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const p = Bun.spawn(["redis-cli", "-h", "127.0.0.1", "-p", String(port), ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out;
}

async function until(what: string, ok: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await ok().catch(() => false)) return;
    await Bun.sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function upLimiter(url: string): Promise<RedisLimiter> {
  const limiter = new RedisLimiter({ url, commandTimeoutMs: 500 });
  await until(`limiter on ${url}`, async () => limiter.isUp());
  return limiter;
}

const item = (client: string, burst: number, rule = "default"): LimitItem => ({
  key: `${keyPrefix}{topology|ip=${client}}:${rule}`,
  intervalMs: 60_000 / burst,
  burst,
});

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  rmSync(dir, { recursive: true, force: true });
});

describe("Redis Cluster (3 masters)", () => {
  const ports: number[] = [];
  let limiter: RedisLimiter;

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    for (const port of ports)
      spawn([
        redisServerPath,
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `nodes-${port}.conf`,
        "--save",
        "",
        "--appendonly",
        "no",
      ]);
    for (const port of ports)
      await until(`node ${port}`, async () => (await cli(port, "PING")).includes("PONG"));
    const create = Bun.spawn(
      [
        "redis-cli",
        "--cluster",
        "create",
        ...ports.map((p) => `127.0.0.1:${p}`),
        "--cluster-replicas",
        "0",
        "--cluster-yes",
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    expect(await create.exited).toBe(0);
    for (const port of ports)
      await until("cluster_state:ok", async () =>
        (await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok"),
      );
    limiter = await upLimiter(`redis-cluster://127.0.0.1:${ports[0]}`);
  }, 30_000);

  afterAll(async () => {
    await limiter?.close();
  });

  test("clients on different nodes, asked in one turn: each decided, each limited to its own burst", async () => {
    const clients = Array.from({ length: 24 }, (_, i) => `10.0.0.${i}`);
    // The keys really live on more than one node (else this would not test grouping by hash tag).
    const owners = new Set<string>();
    for (const c of clients) {
      const slot = Number((await cli(ports[0] as number, "CLUSTER", "KEYSLOT", item(c, 3).key)).trim());
      owners.add(String(Math.floor(slot / 5462)));
    }
    expect(owners.size).toBeGreaterThanOrEqual(2);
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all(clients.map((c) => limiter.check([item(c, 3)])));
      for (const r of results) expect(r.allowed).toBe(round < 3);
    }
  });

  test("several rules of one request (one hash tag) are decided together", async () => {
    const rules = [item("10.1.0.1", 2, "a"), item("10.1.0.1", 5, "b")];
    const verdicts: boolean[] = [];
    for (let i = 0; i < 4; i++) verdicts.push((await limiter.check(rules)).allowed);
    expect(verdicts).toEqual([true, true, false, false]);
  });

  test("a generous limit is leased on every node: far fewer round trips than checks", async () => {
    const before = limiter.stats().roundTrips;
    let admitted = 0;
    for (let i = 0; i < 600; i++) {
      const r = await limiter.check([item(`10.2.0.${i % 3}`, 1_000_000)]);
      if (r.allowed) admitted++;
    }
    expect(admitted).toBe(600);
    expect(limiter.stats().roundTrips - before).toBeLessThan(60);
  });
});

describe("Redis Sentinel", () => {
  let masterPort = 0;
  let sentinelPort = 0;
  let master: Bun.Subprocess;
  let limiter: RedisLimiter;

  beforeAll(async () => {
    masterPort = await freePort();
    sentinelPort = await freePort();
    master = spawn([
      redisServerPath,
      "--port",
      String(masterPort),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ]);
    await until("master", async () => (await cli(masterPort, "PING")).includes("PONG"));
    const conf = join(dir, "sentinel.conf");
    writeFileSync(
      conf,
      `port ${sentinelPort}\nbind 127.0.0.1\nsentinel monitor edge 127.0.0.1 ${masterPort} 1\nsentinel down-after-milliseconds edge 1000\n`,
    );
    spawn([redisServerPath, conf, "--sentinel"]);
    await until("sentinel knows the master", async () =>
      (await cli(sentinelPort, "SENTINEL", "get-master-addr-by-name", "edge")).includes(String(masterPort)),
    );
    limiter = await upLimiter(`redis-sentinel://127.0.0.1:${sentinelPort}?name=edge`);
  }, 30_000);

  afterAll(async () => {
    await limiter?.close();
  });

  test("the master named by the Sentinel enforces the limit", async () => {
    const verdicts: boolean[] = [];
    for (let i = 0; i < 4; i++) verdicts.push((await limiter.check([item("10.3.0.1", 2)])).allowed);
    expect(verdicts).toEqual([true, true, false, false]);
    // The counter is in the master itself, where the Sentinel pointed.
    expect(Number(await cli(masterPort, "DBSIZE"))).toBeGreaterThan(0);
  });

  test("the master gone: the store is down (failure modes apply) instead of waiting", async () => {
    master.kill("SIGKILL");
    await master.exited;
    await until("store down", async () => !limiter.isUp(), 5_000);
    await expect(Promise.resolve(limiter.check([item("10.3.0.2", 2)]))).rejects.toThrow();
  });
});
