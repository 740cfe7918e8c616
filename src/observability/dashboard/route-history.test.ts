import { afterEach, expect, test } from "bun:test";
import { RouteStatsTable } from "../route-stats.ts";
import { quantileMs, RouteHistory } from "./route-history.ts";

let history: RouteHistory | undefined;
afterEach(() => history?.close());

test("each slice holds the requests counted since the previous one; the slice in progress shows at once", () => {
  const table = new RouteStatsTable();
  history = new RouteHistory(table, 60_000, 4);
  table.record("a", 200, 0.002, 10);
  table.record("a", 503, 0.2, 10);
  let [a] = history.windows();
  expect(a?.route).toBe("a");
  expect(a?.counts).toEqual([0, 0, 0, 0, 2]);
  expect(a?.errors).toEqual([0, 0, 0, 0, 1]);
  expect(a?.errorRatio).toBe(0.5);
  history.tick();
  table.record("a", 200, 0.002, 10);
  [a] = history.windows();
  expect(a?.counts).toEqual([0, 0, 0, 2, 1]);
  expect(a?.rate).toBeGreaterThan(0);
  // Older slices fall out of the ring.
  for (let i = 0; i < 4; i++) history.tick();
  [a] = history.windows();
  expect(a?.counts).toEqual([1, 0, 0, 0, 0]);
  history.tick();
  [a] = history.windows();
  expect(a?.counts).toEqual([0, 0, 0, 0, 0]);
});

test("rate, 5xx ratio and percentiles cover the newest minute, the chart the whole ring", () => {
  const table = new RouteStatsTable();
  // 30 s slices: the newest two (plus the one in progress) are "the last minute".
  history = new RouteHistory(table, 30_000, 4);
  expect(history.recentSlices).toBe(2);
  for (let i = 0; i < 10; i++) table.record("r", 500, 5, 0);
  history.tick();
  history.tick();
  history.tick();
  for (let i = 0; i < 10; i++) table.record("r", 200, 0.001, 0);
  const [r] = history.windows();
  expect(r?.counts).toEqual([0, 10, 0, 0, 10]);
  expect(r?.errorRatio).toBe(0);
  expect(r?.p99Ms).toBeLessThanOrEqual(1);
});

test("a slice older than the recent ones keeps its counts and lets its histogram go", () => {
  const table = new RouteStatsTable();
  history = new RouteHistory(table, 30_000, 4); // the newest 2 slices are recent
  table.record("r", 503, 0.002, 0);
  table.record("r", 200, 0.002, 0);
  history.tick();
  const ring = (history as unknown as { ring: Map<string, { buckets?: Float64Array }>[] }).ring;
  const histograms = () => ring.filter((slot) => slot.get("r")?.buckets !== undefined).length;
  expect(histograms()).toBe(1);
  history.tick();
  expect(histograms()).toBe(1);
  history.tick(); // the slice with the requests is now the third newest
  expect(histograms()).toBe(0);
  const [r] = history.windows();
  expect(r?.counts).toEqual([0, 2, 0, 0, 0]);
  expect(r?.errors).toEqual([0, 1, 0, 0, 0]);
  expect(r?.p50Ms).toBeNull();
});

test("a route removed from the configuration disappears; configured again, it starts over", () => {
  const table = new RouteStatsTable();
  history = new RouteHistory(table, 60_000, 3);
  table.record("gone", 200, 0.01, 0);
  history.tick();
  table.retain(new Set());
  expect(history.windows()).toEqual([]);
  history.tick();
  table.record("gone", 200, 0.01, 0);
  const [g] = history.windows();
  expect(g?.counts.at(-1)).toBe(1);
});

test("quantiles interpolate inside the bucket as histogram_quantile does", () => {
  // Buckets (s): 0.0005, 0.001, 0.0025, …; 10 requests in the (0.001, 0.0025] bucket.
  const b = new Float64Array(15);
  b[2] = 10;
  expect(quantileMs(b, 10, 0.5)).toBeCloseTo(1.75, 5);
  expect(quantileMs(b, 0, 0.5)).toBeNull();
  const slow = new Float64Array(15);
  slow[14] = 1;
  expect(quantileMs(slow, 1, 0.99)).toBe(10_000);
});
