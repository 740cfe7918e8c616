import { expect, test } from "bun:test";
import type { PassiveHealthCheck } from "../../model/index.ts";
import { type CompiledBackend, nextEndpoint, usableEndpoint } from "../table.ts";
import { ejectionMs, LOCAL_FAILURE, OutlierDetector, type OutlierEvent } from "./outlier-detector.ts";

const config: PassiveHealthCheck = {
  consecutive5xxErrors: 3,
  consecutiveGatewayErrors: 0,
  splitExternalLocalOriginErrors: false,
  consecutiveLocalOriginFailures: 5,
  baseEjectionMs: 40,
  intervalMs: 1000,
  maxEjectionPercent: 50,
};
const bases = ["http://a:1", "http://b:1", "http://c:1", "http://d:1"];

function detector(c: Partial<PassiveHealthCheck> = {}, list = bases) {
  const events: OutlierEvent[] = [];
  const d = new OutlierDetector("ns/svc:80", { ...config, ...c }, list, (_, e) => events.push(e));
  return { d, events };
}

test("N consecutive 5xx eject; a success in between starts the count over", () => {
  const { d, events } = detector();
  d.report("http://a:1", 500);
  d.report("http://a:1", 503);
  d.report("http://a:1", 200);
  d.report("http://a:1", 500);
  d.report("http://a:1", 500);
  expect(d.isEjected("http://a:1")).toBe(false);
  d.report("http://a:1", LOCAL_FAILURE);
  expect(d.isEjected("http://a:1")).toBe(true);
  expect(d.ejectedCount).toBe(1);
  expect(events[0]).toMatchObject({ kind: "ejected", endpoint: "http://a:1", ms: 40 });
  // 4xx are the client's: never counted.
  for (let i = 0; i < 10; i++) d.report("http://b:1", 404);
  expect(d.isEjected("http://b:1")).toBe(false);
});

test("an ejected endpoint returns after its time, and the next ejection lasts longer", async () => {
  const { d, events } = detector();
  for (let i = 0; i < 3; i++) d.report("http://a:1", 502);
  expect(d.ejected()).toEqual([{ endpoint: "http://a:1", returnsInMs: expect.any(Number), ejections: 1 }]);
  await Bun.sleep(60);
  expect(d.isEjected("http://a:1")).toBe(false);
  expect(d.ejectedCount).toBe(0);
  expect(events.map((e) => e.kind)).toEqual(["ejected", "returned"]);
  for (let i = 0; i < 3; i++) d.report("http://a:1", 502);
  expect(events[2]).toMatchObject({ kind: "ejected", ms: 80 });
  await Bun.sleep(100);
  expect(d.ejectedCount).toBe(0);
});

test("the growing time is capped at 300 s (or the base, when longer), and decays while in service", async () => {
  expect([1, 2, 10, 11].map((n) => ejectionMs(30_000, n))).toEqual([30_000, 60_000, 300_000, 300_000]);
  expect(ejectionMs(400_000, 3)).toBe(400_000);
  const { d, events } = detector({ intervalMs: 30 });
  for (let i = 0; i < 3; i++) d.report("http://a:1", 500);
  await Bun.sleep(50);
  expect(d.isEjected("http://a:1")).toBe(false);
  // Three intervals in service take its one ejection off: the next is the base time again, not twice it.
  await Bun.sleep(100);
  for (let i = 0; i < 3; i++) d.report("http://a:1", 500);
  expect(events.map((e) => (e.kind === "ejected" ? e.ms : e.kind))).toEqual([40, "returned", 40]);
  d.update(config, ["http://b:1", "http://c:1"]); // the endpoint leaves: its state and timer with it
  expect(d.ejectedCount).toBe(0);
  expect(d.ejected()).toEqual([]);
});

test("never the last endpoint in service, nor past maxEjectionPercent (one always may be)", () => {
  const { d, events } = detector({ maxEjectionPercent: 10 });
  for (let i = 0; i < 3; i++) d.report("http://a:1", 500);
  expect(d.ejectedCount).toBe(1); // 10% of 4 is 0.4: the first one still may be, as in Envoy
  for (let i = 0; i < 3; i++) d.report("http://b:1", 500);
  expect(d.ejectedCount).toBe(1);
  expect(events[1]).toEqual({ kind: "refused", endpoint: "http://b:1", reason: "max_percent" });

  const two = detector({}, ["http://a:1", "http://b:1"]);
  for (const base of ["http://a:1", "http://b:1"]) for (let i = 0; i < 3; i++) two.d.report(base, 500);
  expect(two.d.ejectedCount).toBe(1);
  expect(two.events[1]).toEqual({ kind: "refused", endpoint: "http://b:1", reason: "last_endpoint" });
  const one = detector({}, ["http://a:1"]);
  for (let i = 0; i < 10; i++) one.d.report("http://a:1", LOCAL_FAILURE);
  expect(one.d.ejectedCount).toBe(0);
});

test("gateway errors and split local failures count on their own", () => {
  const gw = detector({ consecutive5xxErrors: 0, consecutiveGatewayErrors: 2 });
  gw.d.report("http://a:1", 500);
  gw.d.report("http://a:1", 500);
  expect(gw.d.isEjected("http://a:1")).toBe(false);
  gw.d.report("http://a:1", 504);
  gw.d.report("http://a:1", LOCAL_FAILURE);
  expect(gw.d.isEjected("http://a:1")).toBe(true);

  const split = detector({ splitExternalLocalOriginErrors: true, consecutiveLocalOriginFailures: 2 });
  split.d.report("http://a:1", 500);
  split.d.report("http://a:1", LOCAL_FAILURE);
  split.d.report("http://a:1", 500); // a response: the connection worked, local failures start over
  split.d.report("http://a:1", LOCAL_FAILURE);
  expect(split.d.isEjected("http://a:1")).toBe(false);
  split.d.report("http://a:1", LOCAL_FAILURE);
  expect(split.d.isEjected("http://a:1")).toBe(true);
});

test("round robin and retries skip ejected endpoints and the one that just failed", () => {
  const { d } = detector({}, ["http://a:1", "http://b:1", "http://c:1"]);
  const backend: CompiledBackend = {
    id: "ns/svc:80",
    bases: ["http://a:1", "http://b:1", "http://c:1"],
    problem: undefined,
    h2c: false,
    health: d,
    next: 0,
  };
  const turn = () => Array.from({ length: 6 }, () => nextEndpoint(backend));
  expect(turn()).toEqual([
    "http://a:1",
    "http://b:1",
    "http://c:1",
    "http://a:1",
    "http://b:1",
    "http://c:1",
  ]);
  for (let i = 0; i < 3; i++) d.report("http://b:1", 500);
  expect(turn()).toEqual([
    "http://a:1",
    "http://c:1",
    "http://a:1",
    "http://c:1",
    "http://a:1",
    "http://c:1",
  ]);
  expect(nextEndpoint(backend, "http://a:1")).toBe("http://c:1");
  expect(nextEndpoint(backend, "http://c:1")).toBe("http://a:1");
  // Only the avoided one is in service (c ejected as well would be the last rule's business): it is used.
  expect(usableEndpoint({ ...backend, bases: ["http://a:1", "http://b:1"] }, 0, "http://a:1")).toBe(0);
  const plain: CompiledBackend = { ...backend, health: undefined, next: 0 };
  expect(nextEndpoint(plain, "http://a:1")).toBe("http://b:1");
});
