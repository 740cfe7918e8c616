/**
 * Three gateway processes share one real redis-server and one limit of 100 requests per 10 s (burst
 * 100): 1,000 requests spread across them must admit between 100 and 105 (GCRA refills one request per
 * 100 ms, so a run under half a second can admit at most 4 more than the burst), and every store round
 * trip is one EVALSHA at most per request.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { testLimit } from "../helpers/ratelimit-model.ts";
import { commandCalls, type RedisServer, startRedis } from "../helpers/redis.ts";

const script = join(import.meta.dir, "../helpers/ratelimit-node.ts");
let redis: RedisServer;
const nodes: { proc: Bun.Subprocess<"ignore", "pipe", "inherit">; port: number }[] = [];

async function startNode(env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, script], {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`node exited early: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const line = text.split("\n").find((l) => l.startsWith('{"port"')) ?? "";
  nodes.push({ proc, port: (JSON.parse(line) as { port: number }).port });
}

beforeAll(async () => {
  redis = await startRedis();
  const env = { RL_REDIS_URL: redis.url, RL_LIMIT: JSON.stringify(testLimit()) };
  await Promise.all([startNode(env), startNode(env), startNode(env)]);
});

afterAll(async () => {
  for (const n of nodes) n.proc.kill("SIGKILL");
  await Promise.all(nodes.map((n) => n.proc.exited));
  await redis?.close();
});

test("3 processes, one Redis, 100 per 10 s: 1,000 requests admit 100–105", async () => {
  // Warm each node's connection to Redis so the first requests do not meet a half-open client.
  for (const n of nodes) await fetch(`http://127.0.0.1:${n.port}/__stats`);
  const before = await commandCalls(redis, "evalsha");
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      while (next < 1000) {
        const i = next++;
        const node = nodes[i % 3] as { port: number };
        const res = await fetch(`http://127.0.0.1:${node.port}/x`);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const admitted = statuses.get(200) ?? 0;
  const calls = (await commandCalls(redis, "evalsha")) + (await commandCalls(redis, "eval"));
  console.log(
    `accuracy: ${admitted} admitted of 1000 in ${elapsedMs.toFixed(0)} ms; store calls ${calls - before}`,
  );
  expect(admitted + (statuses.get(429) ?? 0)).toBe(1000);
  expect(admitted).toBeGreaterThanOrEqual(100);
  expect(admitted).toBeLessThanOrEqual(105);
  // Keys over the limit are cached until their retry-after: most of the 900 rejections never reach Redis.
  expect(calls - before).toBeLessThan(400);
}, 30_000);
