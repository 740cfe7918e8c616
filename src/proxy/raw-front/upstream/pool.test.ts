import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import {
  type UnansweredPort,
  unansweredPort,
  unansweredPortAvailable,
} from "../../testing/unanswered-port.ts";
import { ConnectTimeout, type UpstreamConn, type UpstreamHandler, UpstreamPool } from "./pool.ts";

/** Records what the pool tells an exchange, and when. */
function recorder() {
  const t0 = performance.now();
  const heard: { what: string; ms: number; error?: Error }[] = [];
  const closed = Promise.withResolvers<void>();
  const handler: UpstreamHandler = {
    onOpen: () => heard.push({ what: "open", ms: performance.now() - t0 }),
    onData: () => {},
    onDrain: () => {},
    onClose: (_c: UpstreamConn, error) => {
      heard.push({ what: "close", ms: performance.now() - t0, ...(error ? { error } : {}) });
      closed.resolve();
    },
  };
  return { handler, heard, closed: closed.promise };
}

describe.skipIf(!unansweredPortAvailable())("the connect limit (nginx proxy_connect_timeout)", () => {
  let hole: UnansweredPort;
  let server: TCPSocketListener<undefined>;
  const pool = new UpstreamPool();

  beforeAll(async () => {
    hole = await unansweredPort();
    server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  });

  afterAll(() => {
    pool.closeIdle();
    hole?.close();
    server?.stop(true);
  });

  test("a connect that does not complete in time is closed with a ConnectTimeout", async () => {
    const r = recorder();
    const conn = pool.acquire(
      `http://127.0.0.1:${hole.port}`,
      r.handler,
      true,
      undefined,
      200,
    ) as UpstreamConn;
    await r.closed;
    expect(r.heard.map((h) => h.what)).toEqual(["close"]);
    expect(r.heard[0]?.error).toBeInstanceOf(ConnectTimeout);
    expect(r.heard[0]?.error?.message).toBe("could not connect within 200 ms");
    expect(r.heard[0]?.ms).toBeGreaterThan(150);
    expect(r.heard[0]?.ms).toBeLessThan(600);
    expect(conn.closed).toBe(true);
  });

  test("a connect that opens in time is not cut by the limit afterwards", async () => {
    const r = recorder();
    const conn = pool.acquire(
      `http://127.0.0.1:${server.port}`,
      r.handler,
      true,
      undefined,
      100,
    ) as UpstreamConn;
    await Bun.sleep(250);
    expect(r.heard.map((h) => h.what)).toEqual(["open"]);
    expect(conn.dlList).toBeUndefined();
    conn.destroy();
  });

  test("without a limit a pending connect just waits", async () => {
    const r = recorder();
    const conn = pool.acquire(`http://127.0.0.1:${hole.port}`, r.handler, true) as UpstreamConn;
    await Bun.sleep(250);
    expect(r.heard).toEqual([]);
    conn.destroy();
  });

  test("a connection given up before its limit leaves the deadline list", () => {
    const r = recorder();
    const conn = pool.acquire(
      `http://127.0.0.1:${hole.port}`,
      r.handler,
      true,
      undefined,
      5000,
    ) as UpstreamConn;
    expect(conn.dlList).toBeDefined();
    conn.destroy();
    expect(conn.dlList).toBeUndefined();
  });
});
