import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../test/helpers/ports.ts";
import { measureIdleConnections, openFileLimit } from "./idle-connections.ts";

let backend: Subprocess<"ignore", "pipe", "inherit">;
let port: number;

beforeAll(async () => {
  port = await freePort();
  backend = Bun.spawn(["bun", join(import.meta.dir, "backend.ts"), String(port)], { stdout: "pipe" });
  await backend.stdout.getReader().read(); // it prints its port once listening
});

afterAll(() => {
  backend.kill();
});

test("the open-file limit is read from /proc", () => {
  expect(openFileLimit()).toBeGreaterThan(0);
});

test("holds the connections open, each answered once, and reads the server's RSS around them", async () => {
  const r = await measureIdleConnections({
    pid: backend.pid,
    port,
    host: "any.test",
    path: "/",
    wanted: 50,
    settle: 10,
  });
  expect(r.count).toBe(50);
  expect(r.closedEarly).toBe(0);
  expect(r.limitedBy).toBeUndefined();
  expect(r.rssBeforeKb).toBeGreaterThan(1000);
  expect(r.bytesEach).toBe(((r.rssAfterKb - r.rssBeforeKb) * 1024) / 50);
});

test("a port nothing listens on fails the measurement instead of counting nothing", async () => {
  const closed = await freePort(); // nothing listens there
  const run = measureIdleConnections({
    pid: backend.pid,
    port: closed,
    host: "x",
    path: "/",
    wanted: 3,
    settle: 1,
  });
  await expect(run).rejects.toThrow();
});
