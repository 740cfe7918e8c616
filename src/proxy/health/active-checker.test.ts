import { afterAll, expect, test } from "bun:test";
import type { ActiveHealthCheck, PassiveHealthCheck } from "../../model/index.ts";
import { ActiveChecker } from "./active-checker.ts";
import { OutlierDetector } from "./outlier-detector.ts";

const off: PassiveHealthCheck = {
  consecutive5xxErrors: 0,
  consecutiveGatewayErrors: 0,
  splitExternalLocalOriginErrors: false,
  consecutiveLocalOriginFailures: 0,
  baseEjectionMs: 30_000,
  intervalMs: 3_000,
  maxEjectionPercent: 0,
};
const config: ActiveHealthCheck = {
  path: "/healthz",
  method: "GET",
  expectedStatuses: [200],
  intervalMs: 50,
  timeoutMs: 100,
  unhealthyThreshold: 2,
  healthyThreshold: 1,
};

/** A health endpoint that counts probes; `delayMs` holds each answer. */
function pod(delayMs = 0) {
  const p = { probes: 0, server: undefined as ReturnType<typeof Bun.serve> | undefined };
  p.server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch() {
      p.probes++;
      if (delayMs > 0) await Bun.sleep(delayMs);
      return new Response("ok");
    },
  });
  return p;
}
const pods: ReturnType<typeof pod>[] = [];
afterAll(() => {
  for (const p of pods) p.server?.stop(true);
});

test("an endpoint that leaves is no longer probed; a slow one is probed once per timeout + interval", async () => {
  const fast = pod();
  const slow = pod(400);
  pods.push(fast, slow);
  const bases = [`http://127.0.0.1:${fast.server?.port}`, `http://127.0.0.1:${slow.server?.port}`];
  const d = new OutlierDetector("t/a:80", off, bases);
  const c = new ActiveChecker("t/a:80", config, undefined, d, bases);
  await Bun.sleep(600);
  expect(fast.probes).toBeGreaterThanOrEqual(5);
  // The slow endpoint times out (100 ms) each time, so it is out; the next probe waits for the timeout
  // and an interval (the abandoned ones still sleep in the pod): at most 600 / 150 + the first.
  expect(slow.probes).toBeLessThanOrEqual(5);
  expect(slow.probes).toBeGreaterThanOrEqual(2);
  expect(d.isEjected(bases[1] as string)).toBe(true);
  expect(d.isEjected(bases[0] as string)).toBe(false);
  expect(c.totals.error).toBeGreaterThanOrEqual(2);
  // The fast one leaves: its probes stop.
  d.update(off, [bases[1] as string]);
  c.update(config, undefined, d, [bases[1] as string]);
  await Bun.sleep(100);
  const after = fast.probes;
  await Bun.sleep(300);
  expect(fast.probes).toBe(after);
  c.stop();
  const stopped = slow.probes;
  await Bun.sleep(700);
  expect(slow.probes).toBeLessThanOrEqual(stopped + 1);
});
