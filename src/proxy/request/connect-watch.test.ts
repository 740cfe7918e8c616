import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { type UnansweredPort, unansweredPort, unansweredPortAvailable } from "../testing/unanswered-port.ts";
import { watchConnect } from "./connect-watch.ts";

describe.skipIf(!unansweredPortAvailable())("watchConnect (proxy_connect_timeout on the fetch path)", () => {
  let hole: UnansweredPort;
  let server: TCPSocketListener<undefined>;
  let probes = 0;

  beforeAll(async () => {
    hole = await unansweredPort();
    server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open() {
          probes++;
        },
        data() {},
      },
    });
  });

  afterAll(() => {
    hole?.close();
    server?.stop(true);
  });

  test("an endpoint a probe cannot reach either is unreachable after 2 × the limit", async () => {
    const t0 = performance.now();
    const { promise, resolve } = Promise.withResolvers<number>();
    const stop = watchConnect(`http://127.0.0.1:${hole.port}`, 150, () => resolve(performance.now() - t0));
    const ms = await promise;
    stop();
    expect(ms).toBeGreaterThan(280);
    expect(ms).toBeLessThan(700);
  });

  test("a reachable endpoint that is slow to answer: one probe, then nothing", async () => {
    let called = false;
    const before = probes;
    const stop = watchConnect(`http://127.0.0.1:${server.port}`, 100, () => {
      called = true;
    });
    await Bun.sleep(400);
    stop();
    expect(called).toBe(false);
    expect(probes - before).toBe(1);
  });

  test("stopped before the limit (headers came): no probe at all", async () => {
    const before = probes;
    const stop = watchConnect(`http://127.0.0.1:${server.port}`, 100, () => {});
    stop();
    await Bun.sleep(200);
    expect(probes - before).toBe(0);
  });

  test("stopped while the probe waits: never reported", async () => {
    let called = false;
    const stop = watchConnect(`http://127.0.0.1:${hole.port}`, 100, () => {
      called = true;
    });
    await Bun.sleep(150);
    stop();
    await Bun.sleep(150);
    expect(called).toBe(false);
  });
});
