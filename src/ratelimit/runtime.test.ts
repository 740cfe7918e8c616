/**
 * The store's health made visible: statuses pass through untouched without Redis; with Redis they carry
 * `Degraded`, and a change of health publishes them again (with the metric) without a config change.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RedisServer, startRedis } from "../../test/helpers/redis.ts";
import type { GatewayModel } from "../model/index.ts";
import { GatewayMetrics } from "../observability/metrics.ts";
import { testLimit } from "../proxy/testing/guards.ts";
import type { ObjectStatus } from "../status/types.ts";
import { RateLimitRuntime } from "./runtime.ts";

const limit = testLimit({ policy: "ratelimitpolicy/ns/p", failureMode: "Closed" });
const model = {
  listeners: [{ virtualHosts: [{ routes: [{ name: "r", rateLimit: limit }] }] }],
} as unknown as GatewayModel;
const statuses: ObjectStatus[] = [
  {
    target: { group: "gatehouse.dev", kind: "RateLimitPolicy", namespace: "ns", name: "p" },
    status: {
      ancestors: [
        {
          ancestorRef: { kind: "Gateway", name: "gw" },
          conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message: "ok" }],
        },
      ],
    },
  },
];

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.close();
});

function degradedOf(s: readonly ObjectStatus[]): string | undefined {
  const ancestors = (s[0]?.status.ancestors ?? []) as { conditions: { type: string; status: string }[] }[];
  return ancestors[0]?.conditions.find((c) => c.type === "Degraded")?.status;
}

test("in-process store: statuses are published as translation made them", async () => {
  const rt = new RateLimitRuntime({});
  const seen: (readonly ObjectStatus[])[] = [];
  rt.publish(model, statuses, (s) => seen.push(s));
  expect(seen).toEqual([statuses]);
  expect(seen[0]).toBe(statuses);
  await rt.close();
});

test("Redis: Degraded follows the store, published again on each change, with the metric", async () => {
  await redis.stop();
  const metrics = new GatewayMetrics({ processMetrics: false });
  const rt = new RateLimitRuntime({ redisUrl: redis.url, metrics, healthEveryMs: 20, degradedForMs: 200 });
  const seen: (readonly ObjectStatus[])[] = [];
  try {
    rt.publish(model, statuses, (s) => seen.push(s));
    expect(degradedOf(seen[0] ?? [])).toBe("True"); // not connected yet: down
    expect(await metrics.text()).toContain('gatehouse_ratelimit_degraded{policy="ratelimitpolicy/ns/p"} 1');
    await redis.start();
    const deadline = Date.now() + 5_000;
    while (degradedOf(seen.at(-1) ?? []) !== "False" && Date.now() < deadline) await Bun.sleep(20);
    expect(degradedOf(seen.at(-1) ?? [])).toBe("False");
    expect(await metrics.text()).toContain('gatehouse_ratelimit_degraded{policy="ratelimitpolicy/ns/p"} 0');
    // The input was never changed: the next publish starts from translation's statuses again.
    expect(degradedOf(statuses)).toBeUndefined();
  } finally {
    await rt.close();
  }
});
