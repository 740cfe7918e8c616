import { afterEach, expect, test } from "bun:test";
import type { BackendActivation } from "../../model/index.ts";
import { BackendActivator } from "./activator.ts";
import type { ScaleOutcome, WorkloadRef, WorkloadScaler } from "./scaler.ts";

const config = (over: Partial<BackendActivation> = {}): BackendActivation => ({
  source: { kind: "ScaleToZeroPolicy", namespace: "demo", name: "fn" },
  workload: { kind: "Deployment", name: "fn" },
  scaler: "Gateway",
  minReplicas: 0,
  idleMs: 60_000,
  maxHoldMs: 2_000,
  queueLimit: 3,
  maxHeldBodyBytes: 1024,
  servicePort: { name: "http", port: 80 },
  ...over,
});

class FakeScaler implements WorkloadScaler {
  wakes: WorkloadRef[] = [];
  answer: ScaleOutcome = { ok: true, changed: true };
  wake(w: WorkloadRef): Promise<ScaleOutcome> {
    this.wakes.push(w);
    return Promise.resolve(this.answer);
  }
  scaleToZero(): Promise<ScaleOutcome> {
    return Promise.resolve({ ok: true, changed: true });
  }
}

const made: BackendActivator[] = [];
afterEach(() => {
  for (const a of made.splice(0)) a.close();
});

function activator(c = config(), scaler: WorkloadScaler | undefined = new FakeScaler()) {
  const changes: string[] = [];
  const a = new BackendActivator(
    "demo/fn:80",
    c,
    { namespace: "demo", name: "fn" },
    () => scaler,
    () => changes.push(a.scaleProblem ?? "ok"),
  );
  made.push(a);
  return { a, changes };
}

test("held requests are released in order when endpoints appear; one wake for all of them", async () => {
  const scaler = new FakeScaler();
  const { a } = activator(config(), scaler);
  const order: number[] = [];
  const held = [0, 1, 2].map((i) =>
    a.hold().then((o) => {
      order.push(i);
      return o;
    }),
  );
  expect(a.held).toBe(3);
  a.update(config(), { namespace: "demo", name: "fn" }, ["http://127.0.0.1:1"]);
  expect(await Promise.all(held)).toEqual([
    ["http://127.0.0.1:1"],
    ["http://127.0.0.1:1"],
    ["http://127.0.0.1:1"],
  ]);
  expect(order).toEqual([0, 1, 2]);
  expect(scaler.wakes).toEqual([{ kind: "Deployment", namespace: "demo", name: "fn" }]);
  expect(a.totals).toMatchObject({ held: 3, released: 3, activations: 1 });
  expect(a.held).toBe(0);
});

test("a full queue refuses at once; the hold time ends a wait", async () => {
  const { a } = activator(config({ queueLimit: 2, maxHoldMs: 50 }));
  const first = a.hold();
  const second = a.hold();
  expect(await a.hold()).toBe("overflow");
  const t = performance.now();
  expect(await first).toBe("timeout");
  expect(await second).toBe("timeout");
  expect(performance.now() - t).toBeGreaterThanOrEqual(40);
  expect(a.totals).toMatchObject({ overflowed: 1, timedOut: 2 });
});

test("a wake that can never succeed answers every waiter at once and says why", async () => {
  const scaler = new FakeScaler();
  scaler.answer = { ok: false, permanent: true, reason: "ScaleForbidden: no RBAC" };
  const { a, changes } = activator(config({ maxHoldMs: 10_000 }), scaler);
  const t = performance.now();
  expect(await a.hold()).toBe("refused");
  expect(performance.now() - t).toBeLessThan(1000);
  expect(a.scaleProblem).toBe("ScaleForbidden: no RBAC");
  expect(changes).toEqual(["ScaleForbidden: no RBAC"]);
  // Within the refusal window the next request does not even ask.
  expect(await a.hold()).toBe("refused");
  expect(scaler.wakes).toHaveLength(1);
});

test("the short path releases before any compile; External never scales; no scaler just waits", async () => {
  const scaler = new FakeScaler();
  const { a } = activator(config({ scaler: "External" }), scaler);
  const held = a.hold();
  a.endpointsReady(["http://127.0.0.1:2"]);
  expect(await held).toEqual(["http://127.0.0.1:2"]);
  expect(a.bases).toEqual(["http://127.0.0.1:2"]);
  expect(scaler.wakes).toHaveLength(0);
  expect(a.wakeLatencies).toHaveLength(1);
  a.asleep();
  expect(a.bases).toEqual([]);
  const { a: b } = activator(config({ maxHoldMs: 30 }), undefined);
  expect(await b.hold()).toBe("timeout");
});

test("a slice emptied before the next compile takes back what the short path gave: held again, not sent", async () => {
  const { a } = activator(config({ maxHoldMs: 50 }));
  a.endpointsReady(["http://127.0.0.1:2"]);
  expect(a.bases).toEqual(["http://127.0.0.1:2"]);
  a.endpointsReady([]);
  expect(a.bases).toEqual([]);
  expect(a.compiledEmpty).toBe(true);
  expect(await a.hold()).toBe("timeout");
});

test("in flight and the last request time are tracked", () => {
  const { a } = activator();
  const before = a.lastRequestMs;
  a.begin();
  a.begin();
  a.end();
  expect(a.inflight).toBe(1);
  expect(a.totals.requests).toBe(2);
  expect(a.lastRequestMs).toBeGreaterThanOrEqual(before);
});
