/**
 * Metrics and access logs as requests flow through a real GatewayServer, on both fronts. The proof that
 * clients cannot grow the metrics or the heap is in memory.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";

function sample(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

forEachFront("a GatewayServer with an observer", (front) => {
  let upstream: TestUpstream;
  let proxy: GatewayServer;
  let base: string;
  const metrics = new GatewayMetrics({ processMetrics: false });
  const lines: string[] = [];

  beforeAll(async () => {
    upstream = startUpstream("app");
    proxy = new GatewayServer({
      bind: "127.0.0.1",
      front,
      observer: new MetricsAndAccessLog(metrics, new AccessLog(1, (l) => lines.push(l))),
    });
    const m = model(
      [
        listener([
          vhost("app.test", [
            route("httproute/test/app/rule/0/match/0", match("/api"), forwardTo("app")),
            route("httproute/test/app/rule/1/match/0", match("/down"), forwardTo("gone")),
          ]),
        ]),
      ],
      [backend("app", [upstream.port]), backend("gone", [], { problem: "NoReadyEndpoints" })],
    );
    await proxy.apply(m);
    metrics.setConnectionSource(() => proxy.openConnections());
    metrics.configApplied(true, 0.001, m, []);
    base = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
  });

  afterAll(async () => {
    await proxy?.stop();
    await upstream?.stop();
  });

  describe("metrics", () => {
    test("count requests per route and status class, and latency", async () => {
      const before = await metrics.text();
      for (let i = 0; i < 5; i++)
        await (await fetch(`${base}/api/x`, { headers: { host: "app.test" } })).text();
      await (await fetch(`${base}/down`, { headers: { host: "app.test" } })).text();
      await (await fetch(`${base}/nothing`, { headers: { host: "app.test" } })).text();
      const after = await metrics.text();
      const api = 'route="httproute/test/app/rule/0/match/0",code_class="2xx"';
      expect(
        sample(after, "gatehouse_requests_total", api) - sample(before, "gatehouse_requests_total", api),
      ).toBe(5);
      expect(
        sample(
          after,
          "gatehouse_requests_total",
          'route="httproute/test/app/rule/1/match/0",code_class="5xx"',
        ),
      ).toBe(1);
      expect(
        sample(after, "gatehouse_requests_total", 'route="(none)",code_class="4xx"'),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sample(
          after,
          "gatehouse_request_duration_seconds_count",
          'route="httproute/test/app/rule/0/match/0"',
        ),
      ).toBeGreaterThanOrEqual(5);
    });

    test("one access-log line per request with the documented fields", async () => {
      lines.length = 0;
      await (await fetch(`${base}/api/logged?token=secret`, { headers: { host: "app.test" } })).text();
      expect(lines.length).toBe(1);
      const rec = JSON.parse(lines[0] as string);
      expect(rec).toMatchObject({
        level: "info",
        msg: "access",
        method: "GET",
        host: "app.test",
        path: "/api/logged",
        status: 200,
        route: "httproute/test/app/rule/0/match/0",
        client: "127.0.0.1",
        upstream: `127.0.0.1:${upstream.port}`,
      });
      expect(rec.request_id).toMatch(/^[0-9a-f]{32}$/);
      expect(rec.duration_ms).toBeGreaterThan(0);
      expect(rec.upstream_ms).toBeGreaterThan(0);
      expect(lines[0]).not.toContain("secret");
    });

    // The one written exception between the fronts: Bun.serve tells no count of open connections (Server
    // has pendingRequests and pendingWebSockets only, no open/close hook), so GatewayServer.openConnections()
    // counts the raw front's listeners alone and the gauge stays 0 on the Bun front (README, Metrics).
    // Tested as such, so a Bun that starts counting shows here.
    const opened = front === "raw" ? 3 : 0;
    test(`open client connections are a gauge that falls when they close (${opened} counted of 3 on the ${front} front)`, async () => {
      const port = proxy.ports()[0]?.port as number;
      const gauge = async () => {
        const line = (await metrics.text())
          .split("\n")
          .find((l) => l.startsWith("gatehouse_client_connections "));
        return Number(line?.slice(line.lastIndexOf(" ") + 1) ?? Number.NaN);
      };
      const before = await gauge();
      const sockets = await Promise.all(
        [0, 1, 2].map(async () => {
          const answered = Promise.withResolvers<void>();
          const s = await Bun.connect({
            hostname: "127.0.0.1",
            port,
            socket: { data: () => answered.resolve(), close: () => {} },
          });
          s.write("GET /api/x HTTP/1.1\r\nHost: app.test\r\n\r\n");
          await answered.promise;
          return s;
        }),
      );
      expect(await gauge()).toBe(before + opened);
      for (const s of sockets) s.end();
      const deadline = Date.now() + 2000;
      while ((await gauge()) !== before && Date.now() < deadline) await Bun.sleep(10);
      expect(await gauge()).toBe(before);
    });

    test("routes removed from the configuration stop being reported", async () => {
      metrics.configApplied(true, 0.001, model([listener([])]), []);
      expect(await metrics.text()).not.toContain("httproute/test/app/rule/0/match/0");
    });
  });
});
