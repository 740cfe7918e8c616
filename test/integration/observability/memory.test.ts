/**
 * The issue's bad-input case: clients sending a huge number of distinct paths, query strings and Host
 * headers, to a route that matches (Prefix /, wildcard host) and to hosts no route has, must not grow
 * what /metrics reports nor the heap. Measured after a warm-up of the same shape, so pools, JIT code
 * and buffers are already there. The upstream is the echo server, which keeps no record per request
 * (the proxy tests' upstream keeps every request, which would be the only growth measured).
 */

import { heapStats } from "bun:jsc";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AccessLog } from "../../../src/observability/access-log/access-log.ts";
import { GatewayMetrics } from "../../../src/observability/metrics.ts";
import { MetricsAndAccessLog } from "../../../src/observability/request-observer.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";

let echo: EchoServer;

beforeAll(() => {
  echo = startEchoServer({ service: "app" });
});

afterAll(async () => {
  await echo?.stop();
});

const filler = "x".repeat(120);
const routeName = "httproute/test/mem/rule/0/match/0";

/** `count` requests from `from` on, 64 at a time: every path, query and host distinct, half unrouted. */
async function distinctRequests(base: string, from: number, count: number): Promise<void> {
  const batch = 64;
  for (let i = from; i < from + count; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, from + count - i) }, async (_, j) => {
        const n = i + j;
        const host = n % 2 === 0 ? `h${n}.mem.test` : `h${n}.nowhere.example`;
        const res = await fetch(`${base}/p${n}/${filler}/${n * 7919}?q=${n}&${filler}=${n}`, {
          headers: { host },
        });
        await res.arrayBuffer();
      }),
    );
  }
}

/** Series (name and labels, values left out) and the body size of a scrape. */
async function scrape(metrics: GatewayMetrics): Promise<{ series: string[]; bytes: number }> {
  const text = await metrics.text();
  const series = text
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => l.slice(0, l.lastIndexOf(" ")));
  return { series, bytes: text.length };
}

function heap(): { bytes: number; objects: number } {
  Bun.gc(true);
  Bun.gc(true);
  const h = heapStats();
  return { bytes: h.heapSize, objects: h.objectCount };
}

forEachFront("metrics and heap under distinct requests", (front) => {
  const metrics = new GatewayMetrics({ processMetrics: false });
  let proxy: GatewayServer;
  let base: string;
  let logged = 0;

  beforeAll(async () => {
    // Every request is formatted into an access-log line too (then dropped): that must keep nothing.
    const accessLog = new AccessLog(1, () => {
      logged++;
    });
    const observer = new MetricsAndAccessLog(metrics, accessLog);
    proxy = new GatewayServer({ bind: "127.0.0.1", front, observer });
    const m = model(
      [listener([vhost("*.mem.test", [route(routeName, match("/"), forwardTo("app"))])])],
      [backend("app", [echo.port])],
    );
    await proxy.apply(m);
    metrics.configApplied(true, 0.001, m, []);
    base = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
  });

  afterAll(async () => {
    await proxy?.stop();
  });

  test("distinct paths, queries and hosts grow neither the metrics nor the heap", async () => {
    await distinctRequests(base, 0, 3000);
    const before = await scrape(metrics);
    const heapBefore = heap();
    const echoed = echo.requests;

    const n = 30_000;
    await distinctRequests(base, 1_000_000, n);
    const after = await scrape(metrics);
    const heapAfter = heap();

    // All of them served: the routed half forwarded, the rest answered 404 by the proxy.
    expect(logged).toBe(3000 + n);
    expect(echo.requests - echoed).toBe(n / 2);
    expect(after.series).toContain(`gatehouse_requests_total{route="${routeName}",code_class="2xx"}`);
    expect(after.series).toContain('gatehouse_requests_total{route="(none)",code_class="4xx"}');
    // The same series, and a body that differs only by the digits of the counts.
    expect(after.series).toEqual(before.series);
    expect(Math.abs(after.bytes - before.bytes)).toBeLessThan(200);
    expect(metrics.routes.size).toBe(2);
    // Measured flat (within ~50 kB, a few hundred objects). Keeping anything per request would be at
    // least 30,000 objects; keeping the ~300-byte paths, ~9 MB.
    expect(heapAfter.objects - heapBefore.objects).toBeLessThan(5000);
    expect(heapAfter.bytes - heapBefore.bytes).toBeLessThan(2 * 1024 * 1024);
  }, 20_000);
});
