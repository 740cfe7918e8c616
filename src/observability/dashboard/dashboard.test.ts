import { afterEach, expect, test } from "bun:test";
import { RouteStatsTable } from "../route-stats.ts";
import { Dashboard, type DashboardSource } from "./dashboard.ts";

let dashboard: Dashboard | undefined;
afterEach(() => dashboard?.close());

test("the version changes when the model, the problems or the statuses are replaced, not otherwise", () => {
  const source: { -readonly [K in keyof DashboardSource]: DashboardSource[K] } = {
    model: {},
    problems: [],
    statuses: [],
  };
  dashboard = new Dashboard(source, new RouteStatsTable());
  const v1 = dashboard.stats().version;
  expect(dashboard.stats().version).toBe(v1);
  source.problems = [];
  const v2 = dashboard.stats().version;
  expect(v2).toBe(v1 + 1);
  source.statuses = [];
  expect(dashboard.stats().version).toBe(v2 + 1);
});

test("streams are capped; a cancelled one frees its slot and the push timer stops with the last", async () => {
  dashboard = new Dashboard({ model: undefined, problems: [], statuses: [] }, new RouteStatsTable(), {
    maxStreams: 2,
    pushMs: 10,
  });
  const a = dashboard.events(new AbortController().signal);
  const gone = new AbortController();
  const b = dashboard.events(gone.signal);
  expect([a.status, b.status]).toEqual([200, 200]);
  expect(a.headers.get("content-type")).toBe("text/event-stream");
  expect(dashboard.events(new AbortController().signal).status).toBe(503);
  const reader = (a.body as ReadableStream<Uint8Array>).getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  expect(first).toStartWith("retry: 2000\nevent: stats\ndata: {");
  // A later push arrives on its own.
  expect(new TextDecoder().decode((await reader.read()).value)).toStartWith("event: stats\n");
  gone.abort();
  expect(dashboard.openStreams).toBe(1);
  expect(dashboard.events(new AbortController().signal).status).toBe(200);
  await reader.cancel();
  expect(dashboard.openStreams).toBe(1);
});

test("a client that stops reading is dropped instead of queueing events for ever", async () => {
  dashboard = new Dashboard({ model: undefined, problems: [], statuses: [] }, new RouteStatsTable(), {
    pushMs: 1,
  });
  dashboard.events(new AbortController().signal);
  expect(dashboard.openStreams).toBe(1);
  for (let i = 0; i < 100 && dashboard.openStreams > 0; i++) await Bun.sleep(5);
  expect(dashboard.openStreams).toBe(0);
});
