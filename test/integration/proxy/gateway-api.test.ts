/**
 * Data-plane behaviour the Gateway API conformance suite asks for, against the project's echo server
 * (same `?delay=` and `/retry/` behaviour as upstream's echo-basic): listeners sharing a socket,
 * invalid backend references answering 500 by weight, request and backend timeouts (0 disables), and
 * retries (HTTPRouteRetry's cases). Run on both fronts; the HTTPS case once, as HTTPS is always Bun.serve.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Listener, Route } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { peerCommonName, selfSigned } from "../../../src/proxy/testing/certs.ts";
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

const say = (body: string) => ({ kind: "DirectResponse", status: 200, body }) as const;
const to = (name: string, path: string, extra: Partial<Route> = {}) =>
  route(name, match(path), forwardTo("echo"), extra);

forEachFront("Gateway API data plane", (front) => {
  let echo: EchoServer;
  let gw: GatewayServer;
  let port: number;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    echo = startEchoServer({ pod: "echo-pod" });
    // Listener isolation as translation emits it: each listener's virtual hosts are the intersections.
    const all = ["bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"];
    const isolated = (name: string, hosts: string[], hostname?: string): Listener =>
      listener(
        hosts.map((h) => vhost(h, [route(`${name}@${h}`, match(`/${name}`), say(name))])),
        { name: `gateway/test/iso/${name}`, ...(hostname ? { hostname } : {}) },
      );
    const main = listener([
      vhost("main.example", [
        to("request-timeout", "/request-timeout", { timeouts: { requestMs: 300 } }),
        to("disable-request-timeout", "/disable-request-timeout", { timeouts: { requestMs: 0 } }),
        to("backend-timeout", "/backend-timeout", { timeouts: { backendRequestMs: 300 } }),
        to("disable-backend-timeout", "/disable-backend-timeout", { timeouts: { backendRequestMs: 0 } }),
        to("bounded-retries", "/bounded", {
          timeouts: { requestMs: 400, backendRequestMs: 150 },
          retry: { attempts: 10, codes: [504], backoffMs: 0 },
        }),
        to("retry-500", "/retry/code-500-attempts-3", { retry: { attempts: 3, codes: [500], backoffMs: 0 } }),
        to("retry-all", "/retry/code-all-attempts-2", {
          retry: { attempts: 2, codes: [500, 502, 503, 504], backoffMs: 10 },
        }),
        route("partly-invalid", match("/partly"), {
          kind: "Forward",
          backends: [
            { backendId: "echo", weight: 1, filters: [] },
            { backendId: "other-ns/svc:8080", weight: 1, filters: [], failStatus: 500 },
          ],
        }),
        to("default", "/"),
      ]),
    ]);
    gw = new GatewayServer({ bind: "127.0.0.1", defaultUpstreamTimeoutMs: 250, front });
    await gw.apply(
      model(
        [
          main,
          isolated("empty", all),
          isolated("wildcard", all.slice(1), "*.example.com"),
          isolated("foo", all.slice(2), "*.foo.example.com"),
          isolated("abc", all.slice(3), "abc.foo.example.com"),
        ],
        [backend("echo", [echo.port])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    await echo.stop();
    if (restoreSink) setLogSink(restoreSink);
  });

  async function call(path: string, host = "main.example", init: RequestInit = {}) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { host } });
    return { status: res.status, text: await res.text() };
  }

  describe("listeners sharing an address and port", () => {
    test("one socket serves them all", () => {
      const ports = gw.ports();
      expect(ports.length).toBe(1);
      expect(ports[0]?.listener).toContain("gateway/test/iso/abc");
    });

    test("a request reaches only the routes of the most specific listener (isolation)", async () => {
      const cases: [string, string][] = [
        ["bar.com", "empty"],
        ["bar.example.com", "wildcard"],
        ["bar.foo.example.com", "foo"],
        ["abc.foo.example.com", "abc"],
      ];
      for (const [host, owner] of cases) {
        for (const path of ["empty", "wildcard", "foo", "abc"]) {
          const res = await call(`/${path}`, host);
          expect([host, path, res.status]).toEqual([host, path, path === owner ? 200 : 404]);
        }
      }
    });
  });

  describe("invalid backend references (failStatus)", () => {
    test("the invalid entry answers 500 for its share and is never forwarded; the valid one serves", async () => {
      const before = echo.requests;
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await call("/partly")).status);
      expect(statuses.filter((s) => s === 500).length).toBe(5);
      expect(statuses.filter((s) => s === 200).length).toBe(5);
      expect(echo.requests - before).toBe(5);
    });
  });

  describe("timeouts", () => {
    test("request and backend-request limits answer 504", async () => {
      for (const path of ["/request-timeout?delay=600ms", "/backend-timeout?delay=600ms"]) {
        const t0 = performance.now();
        expect((await call(path)).status).toBe(504);
        expect(performance.now() - t0).toBeLessThan(550);
      }
      expect((await call("/request-timeout?delay=10ms")).status).toBe(200);
    });

    test("0 disables a limit, including the gateway default (250 ms here)", async () => {
      expect((await call("/default?delay=400ms")).status).toBe(504);
      expect((await call("/disable-request-timeout?delay=400ms")).status).toBe(200);
      expect((await call("/disable-backend-timeout?delay=400ms")).status).toBe(200);
    });

    test("the request limit bounds every attempt together", async () => {
      const t0 = performance.now();
      expect((await call("/bounded?delay=300ms")).status).toBe(504);
      const took = performance.now() - t0;
      expect(took).toBeGreaterThan(380);
      expect(took).toBeLessThan(600);
    });
  });

  describe("retries (HTTPRouteRetry)", () => {
    const retry = async (path: string, query: string, init: RequestInit = {}) =>
      (await call(`${path}?${query}&uuid=${crypto.randomUUID()}`, "main.example", init)).status;
    const a3 = "/retry/code-500-attempts-3";
    const a2 = "/retry/code-all-attempts-2";

    test("attempts are retries after the first; only the listed codes are retried", async () => {
      expect(await retry(a3, "responseCode=500&succeedAfter=2")).toBe(200);
      expect(await retry(a3, "responseCode=500&succeedAfter=4")).toBe(500);
      expect(await retry(a3, "responseCode=503&succeedAfter=2")).toBe(503);
      for (const code of [500, 502, 503, 504]) {
        expect(await retry(a2, `responseCode=${code}&succeedAfter=1`)).toBe(200);
        expect(await retry(a2, `responseCode=${code}&succeedAfter=3`)).toBe(code);
      }
    });

    test("a reset connection is retried; a request with a body is not", async () => {
      expect(await retry(a2, "succeedAfter=1")).toBe(200);
      expect(await retry(a2, "responseCode=500&succeedAfter=1", { method: "POST", body: "x" })).toBe(500);
    });
  });
});

// HTTPS listeners are always Bun.serve, whatever the front: one run covers them.
describe("HTTPS listeners sharing an address and port", () => {
  let restore: ((line: string) => void) | undefined;
  beforeAll(() => {
    restore = setLogSink(() => {});
  });
  afterAll(() => {
    if (restore) setLogSink(restore);
  });

  test("one port offers each listener's certificate by SNI", async () => {
    const tls = new GatewayServer({ bind: "127.0.0.1" });
    try {
      const https = (name: string): Listener =>
        listener([vhost(name, [route(name, match("/"), say(name))])], {
          name,
          protocol: "HTTPS",
          tls: { certificates: [selfSigned(name)] },
        });
      await tls.apply(model([https("one.example"), https("two.example")]));
      expect(tls.ports().length).toBe(1);
      const p = tls.ports()[0]?.port ?? 0;
      expect(await peerCommonName(p, "one.example")).toBe("one.example");
      expect(await peerCommonName(p, "two.example")).toBe("two.example");
      const res = await fetch(`https://127.0.0.1:${p}/`, {
        headers: { host: "two.example" },
        tls: { rejectUnauthorized: false, serverName: "two.example" },
      });
      expect(await res.text()).toBe("two.example");
    } finally {
      await tls.stop();
    }
  });
});
