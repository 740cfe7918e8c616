/**
 * The last-request times shared through a real redis-server: what one replica publishes the other reads,
 * a key only moves forward, and an unreachable Redis reads as "unknown" (no scale-down on a guess).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RedisServer, startRedis } from "../../../test/helpers/redis.ts";
import type { BackendActivation } from "../../model/index.ts";
import { activatorFor, keepActivators } from "./registry.ts";
import { SharedActivity } from "./shared-activity.ts";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  keepActivators(new Set());
  await redis?.close();
});

const config: BackendActivation = {
  source: { kind: "ScaleToZeroPolicy", namespace: "demo", name: "fn" },
  workload: { kind: "Deployment", name: "fn" },
  scaler: "Gateway",
  minReplicas: 0,
  idleMs: 60_000,
  maxHoldMs: 1_000,
  queueLimit: 10,
  maxHeldBodyBytes: 0,
  servicePort: { port: 80 },
};

test("one replica's requests are seen by another; the time never goes back; Redis down is unknown", async () => {
  const prefix = `test:${crypto.randomUUID()}:`;
  const busy = new SharedActivity(redis.url, { keyPrefix: prefix, everyMs: 60_000 });
  const leader = new SharedActivity(redis.url, { keyPrefix: prefix, everyMs: 60_000 });
  try {
    const a = activatorFor("demo/fn:80", config, ["http://127.0.0.1:1"], { namespace: "demo", name: "fn" });
    for (let i = 0; i < 50 && (await leader.lastActivity("demo/fn:80")) === undefined; i++)
      await Bun.sleep(20);
    expect(await leader.lastActivity("demo/fn:80")).toBe(0);
    a.begin();
    a.end();
    const served = a.lastRequestMs;
    await busy.publish();
    expect(await leader.lastActivity("demo/fn:80")).toBe(served);
    // An older time published later (a slow replica) does not move the key back.
    await redis.command("SET", `${prefix}demo/fn:80`, String(served + 5000));
    a.begin();
    a.end();
    await busy.publish();
    expect(await leader.lastActivity("demo/fn:80")).toBe(served + 5000);
    await redis.stop();
    expect(await leader.lastActivity("demo/fn:80")).toBeUndefined();
  } finally {
    busy.close();
    leader.close();
    await redis.start();
  }
});
