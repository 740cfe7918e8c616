import { beforeEach, describe, expect, test } from "bun:test";
import type { CompiledBackend } from "../table.ts";
import {
  EWMA_FAILURE_MS,
  EwmaPicker,
  LeastRequestPicker,
  roundRobinPicker,
  twoChoices,
} from "./endpoint-picker.ts";
import { addSample, clearEndpointStats, DECAY_MS, decayedEwma, statsOf } from "./endpoint-stats.ts";
import { balanceInput } from "./request-input.ts";

const input = balanceInput(new Headers(), "/", "", "10.0.0.9", false);

function backend(n: number): CompiledBackend {
  const bases = Array.from({ length: n }, (_, i) => `http://10.1.0.${i + 1}:80`);
  return { id: "ns/svc:80", bases, problem: undefined, h2c: false, next: 0 };
}

function tally(n: number, pick: () => number, times: number): number[] {
  const counts = new Array(n).fill(0);
  for (let i = 0; i < times; i++) counts[pick()]++;
  return counts;
}

beforeEach(() => clearEndpointStats());

describe("round robin", () => {
  test("in turn, sharing the backend's position; a retry skips the endpoint it avoids", () => {
    const b = backend(3);
    const p = roundRobinPicker(b);
    expect([p.pick(input, -1), p.pick(input, -1), p.pick(input, -1), p.pick(input, -1)]).toEqual([
      0, 1, 2, 0,
    ]);
    expect(b.next).toBe(1);
    expect(p.pick(input, 1)).toBe(2);
  });
});

describe("two choices", () => {
  test("never returns the avoided endpoint when there are two", () => {
    for (let i = 0; i < 200; i++) expect(twoChoices(2, 0, () => false)).toBe(1);
  });

  test("each endpoint is drawn about equally when none is better", () => {
    const counts = tally(4, () => twoChoices(4, -1, () => false), 8000);
    for (const c of counts) expect(c).toBeGreaterThan(1500);
  });
});

describe("least request", () => {
  test("prefers endpoints with fewer requests in flight", () => {
    const b = backend(4);
    const p = new LeastRequestPicker(b);
    // Endpoint 0 holds 5 requests: it can win only when drawn against... never, each draw has a less busy one.
    for (let i = 0; i < 5; i++) p.started(0);
    const counts = tally(4, () => p.pick(input, -1), 3000);
    expect(counts[0]).toBe(0);
    for (const c of counts.slice(1)) expect(c).toBeGreaterThan(700);
  });

  test("counts requests until they end, so load spreads evenly under concurrency", () => {
    const b = backend(3);
    const p = new LeastRequestPicker(b);
    const held: number[] = [];
    for (let i = 0; i < 30; i++) {
      const e = p.pick(input, -1);
      p.started(e);
      held.push(e);
    }
    const counts = [0, 1, 2].map((e) => held.filter((h) => h === e).length);
    // Pure random would often be 5/15/10; two choices keeps every endpoint near 10.
    for (const c of counts) expect(Math.abs(c - 10)).toBeLessThanOrEqual(2);
    for (const e of held) p.ended(e, 1, false);
    expect(statsOf(b.bases[0] as string).inFlight).toBe(0);
  });
});

describe("ewma", () => {
  test("a sample counts more the longer the average went without one (ingress-nginx's decay)", () => {
    const s = statsOf("http://10.9.9.9:80");
    addSample(s, 100, 1000);
    expect(s.ewma).toBe(100);
    addSample(s, 500, 1000 + DECAY_MS);
    // weight e^-1 on the old average.
    expect(s.ewma).toBeCloseTo(100 * Math.exp(-1) + 500 * (1 - Math.exp(-1)), 6);
    expect(decayedEwma(s, 1000 + 2 * DECAY_MS)).toBeCloseTo(s.ewma * Math.exp(-1), 6);
  });

  test("prefers the faster endpoint; a slow one still wins a draw against itself only", () => {
    const b = backend(3);
    const now = performance.now();
    addSample(statsOf(b.bases[0] as string), 500, now);
    addSample(statsOf(b.bases[1] as string), 5, now);
    addSample(statsOf(b.bases[2] as string), 10, now);
    const p = new EwmaPicker(b);
    const counts = tally(3, () => p.pick(input, -1), 3000);
    expect(counts[0]).toBe(0);
    // 1 beats 2 whenever both are drawn (1/3 of draws) and each wins its draws against 0.
    expect(counts[1] as number).toBeGreaterThan(counts[2] as number);
  });

  test("a failed attempt counts as at least EWMA_FAILURE_MS, pushing traffic away from it", () => {
    const b = backend(2);
    const p = new EwmaPicker(b);
    p.started(0);
    p.ended(0, 2, true);
    p.started(1);
    p.ended(1, 20, false);
    expect(statsOf(b.bases[0] as string).ewma).toBe(EWMA_FAILURE_MS);
    expect(p.pick(input, -1)).toBe(1);
  });

  test("a new endpoint starts at its peers' average (slow start), not at 0", () => {
    const b = backend(3);
    const now = performance.now();
    addSample(statsOf(b.bases[0] as string), 40, now);
    addSample(statsOf(b.bases[1] as string), 60, now);
    new EwmaPicker(b);
    expect(statsOf(b.bases[2] as string).ewma).toBe(50);
  });
});
