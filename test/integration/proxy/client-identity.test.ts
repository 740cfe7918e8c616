/**
 * One client identity (`--trusted-proxies`, `--proxy-protocol`), live on both fronts: the client a rate
 * limit keys on, the access log's `client` and the X-Forwarded-For the backend gets. A forged
 * X-Forwarded-For from an untrusted peer is ignored everywhere; a trusted peer's chain is walked right to
 * left and the peer appended. The trusted peer is a second loopback address (127.0.0.2), bound as the
 * client's local address. PROXY headers (v1 and v2, plain and TLS) are read by the raw front only; with
 * `--front bun` asking for them is refused at start.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AccessLog } from "../../../src/observability/access-log/access-log.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayMetrics } from "../../../src/observability/metrics.ts";
import { MetricsAndAccessLog } from "../../../src/observability/request-observer.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { RateLimitEnforcer } from "../../../src/ratelimit/enforce.ts";
import { LocalLimiter } from "../../../src/ratelimit/local.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { echoed, gatewayModel, send, TRUSTED, v1, v2 } from "./client-identity-harness.ts";

forEachFront("one client identity", (front) => {
  let up: TestUpstream;
  let gw: GatewayServer;
  let port: number;
  const access: { client: string; path: string }[] = [];
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    up = startUpstream("up");
    const observer = new MetricsAndAccessLog(
      new GatewayMetrics(),
      new AccessLog(1, (line) => access.push(JSON.parse(line) as { client: string; path: string })),
    );
    const rateLimit = new RateLimitEnforcer({ limiter: new LocalLimiter() });
    gw = new GatewayServer({
      bind: "127.0.0.1",
      front,
      trustedProxies: [`${TRUSTED}/32`],
      guards: { rateLimit },
      observer,
    });
    await gw.apply(gatewayModel(up.port, false));
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    await up.stop();
    if (restoreSink) setLogSink(restoreSink);
  });

  const lastAccess = (path: string) => access.filter((a) => a.path === path).at(-1)?.client;

  test("an untrusted peer's forged X-Forwarded-For: the backend, the access log and the limit see the peer", async () => {
    const got = echoed(await send({ port, path: "/untrusted", xff: "6.6.6.6, 198.51.100.7" }));
    expect(got.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(lastAccess("/untrusted")).toBe("127.0.0.1");
    // One request per client per hour: a new forged address each time is still the same client.
    const first = await send({ port, path: "/limited", xff: "203.0.113.1" });
    const second = await send({ port, path: "/limited", xff: "203.0.113.2" });
    expect([first, second].map((r) => (r === "closed" ? 0 : r.status))).toEqual([200, 429]);
    expect(lastAccess("/limited")).toBe("127.0.0.1");
  });

  test("a trusted peer: the chain is walked right to left, the peer appended upstream", async () => {
    const got = echoed(await send({ port, path: "/trusted", from: TRUSTED, xff: "6.6.6.6, 198.51.100.7" }));
    expect(got.headers["x-forwarded-for"]).toBe(`6.6.6.6, 198.51.100.7, ${TRUSTED}`);
    expect(lastAccess("/trusted")).toBe("198.51.100.7");
    // Each client behind the proxy has its own limit.
    const a = await send({ port, path: "/limited", from: TRUSTED, xff: "198.51.100.21" });
    const b = await send({ port, path: "/limited", from: TRUSTED, xff: "198.51.100.22" });
    const again = await send({ port, path: "/limited", from: TRUSTED, xff: "198.51.100.21" });
    expect([a, b, again].map((r) => (r === "closed" ? 0 : r.status))).toEqual([200, 200, 429]);
    // The refused request is logged with its client as well.
    expect(lastAccess("/limited")).toBe("198.51.100.21");
  });

  test("the same on a route the raw front relays to the listener's app", async () => {
    const forged = echoed(await send({ port, path: "/slow/u", xff: "6.6.6.6" }));
    expect(forged.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(lastAccess("/slow/u")).toBe("127.0.0.1");
    const vouched = echoed(await send({ port, path: "/slow/t", from: TRUSTED, xff: "198.51.100.7" }));
    expect(vouched.headers["x-forwarded-for"]).toBe(`198.51.100.7, ${TRUSTED}`);
    expect(lastAccess("/slow/t")).toBe("198.51.100.7");
  });

  test("garbage in a trusted peer's X-Forwarded-For: the client is unknown, never the proxy", async () => {
    const status = (r: Awaited<ReturnType<typeof send>>) => (r === "closed" ? 0 : r.status);
    // The allow list covers 127.0.0.0/8, the proxy included: a client it cannot name is refused.
    expect(status(await send({ port, path: "/allowed", from: TRUSTED, xff: "127.0.0.9" }))).toBe(200);
    expect(status(await send({ port, path: "/allowed", from: TRUSTED, xff: "198.51.100.7" }))).toBe(403);
    expect(status(await send({ port, path: "/allowed", from: TRUSTED, xff: "not-an-ip" }))).toBe(403);
    expect(status(await send({ port, path: "/allowed", from: TRUSTED, xff: "127.0.0.9, junk" }))).toBe(403);
    // A rate limit counts such a request under the peer that sent it.
    const junk = await send({ port, path: "/limited", from: TRUSTED, xff: "junk" });
    const peer = await send({ port, path: "/limited", from: TRUSTED });
    expect([junk, peer].map(status)).toEqual([200, 429]);
  });

  test("a trusted peer without X-Forwarded-For is the client", async () => {
    const got = echoed(await send({ port, path: "/bare", from: TRUSTED }));
    expect(got.headers["x-forwarded-for"]).toBe(TRUSTED);
    expect(lastAccess("/bare")).toBe(TRUSTED);
  });
});

describe("--proxy-protocol with --front bun", () => {
  test("is refused at start, naming the reason", () => {
    expect(
      () =>
        new GatewayServer({
          bind: "127.0.0.1",
          front: "bun",
          proxyProtocol: "all",
          trustedProxies: ["127.0.0.1/32"],
        }),
    ).toThrow("--proxy-protocol needs --front raw: Bun.serve cannot read a PROXY header");
  });
});

for (const tls of [false, true]) {
  describe(`PROXY protocol on the raw front (${tls ? "HTTPS" : "HTTP"})`, () => {
    let up: TestUpstream;
    let gw: GatewayServer;
    let port: number;
    const access: { client: string; path: string }[] = [];
    let restoreSink: ((line: string) => void) | undefined;
    const metrics = new GatewayMetrics();

    beforeAll(async () => {
      restoreSink = setLogSink(() => {});
      up = startUpstream("up");
      const observer = new MetricsAndAccessLog(
        metrics,
        new AccessLog(1, (line) => access.push(JSON.parse(line) as { client: string; path: string })),
      );
      const rateLimit = new RateLimitEnforcer({ limiter: new LocalLimiter() });
      gw = new GatewayServer({
        bind: "127.0.0.1",
        front: "raw",
        trustedProxies: [`${TRUSTED}/32`],
        proxyProtocol: "all",
        guards: { rateLimit },
        observer,
      });
      await gw.apply(gatewayModel(up.port, tls));
      port = gw.ports()[0]?.port ?? 0;
    });

    afterAll(async () => {
      await gw.stop();
      await up.stop();
      if (restoreSink) setLogSink(restoreSink);
    });

    const lastAccess = (path: string) => access.filter((a) => a.path === path).at(-1)?.client;

    test("v1 and v2 from a trusted balancer name the client: backend, access log and limit key", async () => {
      const one = echoed(await send({ port, path: "/v1", from: TRUSTED, preamble: v1("203.0.113.7"), tls }));
      expect(one.headers["x-forwarded-for"]).toBe("203.0.113.7");
      expect(lastAccess("/v1")).toBe("203.0.113.7");
      const two = echoed(
        await send({ port, path: "/v2", from: TRUSTED, preamble: v2([198, 51, 100, 9]), tls }),
      );
      expect(two.headers["x-forwarded-for"]).toBe("198.51.100.9");
      expect(lastAccess("/v2")).toBe("198.51.100.9");
      const a = await send({ port, path: "/limited", from: TRUSTED, preamble: v1("203.0.113.31"), tls });
      const b = await send({ port, path: "/limited", from: TRUSTED, preamble: v1("203.0.113.32"), tls });
      const again = await send({ port, path: "/limited", from: TRUSTED, preamble: v1("203.0.113.31"), tls });
      expect([a, b, again].map((r) => (r === "closed" ? 0 : r.status))).toEqual([200, 200, 429]);
    });

    test("the header's client reaches the listener's app on a relayed route", async () => {
      const got = echoed(
        await send({ port, path: "/slow/p", from: TRUSTED, preamble: v2([198, 51, 100, 10]), tls }),
      );
      expect(got.headers["x-forwarded-for"]).toBe("198.51.100.10");
      expect(lastAccess("/slow/p")).toBe("198.51.100.10");
    });

    test("the header's client is not trusted: its forged X-Forwarded-For is dropped", async () => {
      const got = echoed(
        await send({
          port,
          path: "/forged",
          from: TRUSTED,
          preamble: v1("203.0.113.7"),
          xff: "6.6.6.6",
          tls,
        }),
      );
      expect(got.headers["x-forwarded-for"]).toBe("203.0.113.7");
      expect(lastAccess("/forged")).toBe("203.0.113.7");
    });

    test("a rate limit's own trustedProxies walk no X-Forwarded-For after a PROXY header either", async () => {
      // Every address is the policy's proxy; forged chains must not give one client fresh buckets.
      const statuses: number[] = [];
      for (const xff of ["10.0.0.1", "10.0.0.2", "10.0.0.3"]) {
        const res = await send({
          port,
          path: "/own-proxies",
          from: TRUSTED,
          preamble: v1("203.0.113.41"),
          xff,
          tls,
        });
        statuses.push(res === "closed" ? 0 : res.status);
      }
      expect(statuses).toEqual([200, 429, 429]);
    });

    test("X-Forwarded-For is never walked after a PROXY header, even from a trusted source or none", async () => {
      // The header names a trusted address: its connection's X-Forwarded-For is still the client's own.
      const named = echoed(
        await send({ port, path: "/named", from: TRUSTED, preamble: v1(TRUSTED), xff: "10.1.2.3", tls }),
      );
      expect(named.headers["x-forwarded-for"]).toBe(TRUSTED);
      expect(lastAccess("/named")).toBe(TRUSTED);
      // UNKNOWN (v1) and LOCAL (v2) keep the balancer as the peer; what it passes on is not believed.
      const local = Uint8Array.from([...v2([0, 0, 0, 0]).subarray(0, 12), 0x20, 0x00, 0, 0]);
      for (const [path, preamble] of [
        ["/unknown", Buffer.from("PROXY UNKNOWN\r\n")],
        ["/slow/unknown", Buffer.from("PROXY UNKNOWN\r\n")],
        ["/local", local],
      ] as const) {
        const got = echoed(await send({ port, path, from: TRUSTED, preamble, xff: "10.1.2.3", tls }));
        expect(got.headers["x-forwarded-for"]).toBe(TRUSTED);
        expect(lastAccess(path)).toBe(TRUSTED);
      }
    });

    test("refused: a PROXY header from an untrusted peer, no header, a malformed one; nothing reaches the backend", async () => {
      const before = up.requests.length;
      expect(await send({ port, path: "/x", preamble: v1("203.0.113.7"), tls })).toBe("closed");
      expect(await send({ port, path: "/x", from: TRUSTED, tls })).toBe("closed");
      expect(
        await send({ port, path: "/x", from: TRUSTED, preamble: Buffer.from("PROXY TCP4 1.2.3\r\n"), tls }),
      ).toBe("closed");
      expect(up.requests.length).toBe(before);
      // Never silent: each refusal counted.
      expect(await metrics.text()).toContain(
        'gatehouse_connections_refused_total{reason="proxy_protocol"} 3',
      );
    });

    test("a trusted peer that does not send its whole header in time is closed", async () => {
      const t0 = performance.now();
      expect(
        await send({
          port,
          path: "/late",
          from: TRUSTED,
          preamble: Buffer.from("PROXY TCP4 "),
          tls,
          hold: true,
        }),
      ).toBe("closed");
      // PROXY_HEADER_TIMEOUT_SECONDS is 10; Bun's socket timer runs in steps of about 4 s.
      expect(performance.now() - t0).toBeGreaterThan(7000);
      expect(await metrics.text()).toContain(
        'gatehouse_connections_refused_total{reason="proxy_protocol"} 4',
      );
    }, 20_000);
  });
}
