/**
 * The data plane end to end: a GatewayServer on port 0 built from a hand-written model, in front of
 * real Bun upstreams. Host and route selection, actions, error statuses and balancing, on both fronts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Route } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
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
import { type Received, startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";

forEachFront("the data plane", (front) => {
  let a: TestUpstream;
  let b: TestUpstream;
  let c: TestUpstream;
  let gw: GatewayServer;
  let port: number;
  const logs: string[] = [];
  let restoreSink: ((line: string) => void) | undefined;

  const say = (body: string) => ({ kind: "DirectResponse", status: 200, body }) as const;

  beforeAll(async () => {
    restoreSink = setLogSink((l) => logs.push(l));
    [a, b, c] = [startUpstream("a"), startUpstream("b"), startUpstream("c")];
    const closed = await freePort();
    const fooRoutes: Route[] = [
      route("exact-a", match("/a", "Exact"), forwardTo("a")),
      route("prefix-api", match("/api"), forwardTo("b")),
      route("post-only", match("/m", "Prefix", { method: "POST" }), say("post")),
      route("any-method", match("/m"), say("any")),
      route(
        "canary",
        match("/h", "Prefix", { headers: [{ type: "Exact", name: "x-canary", value: "yes" }] }),
        say("canary"),
      ),
      route("stable", match("/h"), say("stable")),
      route(
        "query-v2",
        match("/q", "Prefix", { queryParams: [{ type: "Exact", name: "v", value: "2" }] }),
        say("v2"),
      ),
      route("query-any", match("/q"), say("v-any")),
      route("to-https", match("/secure"), { kind: "Redirect", scheme: "https", statusCode: 301 }),
      route("moved", match("/old"), {
        kind: "Redirect",
        path: { type: "ReplacePrefixMatch", value: "/new" },
        statusCode: 302,
      }),
      route("teapot", match("/direct", "Exact"), {
        kind: "DirectResponse",
        status: 418,
        body: "short and stout",
      }),
      route("zero", match("/zero"), forwardTo({ id: "a", weight: 0 })),
      route("down", match("/down"), forwardTo("down")),
      route("ghost", match("/ghost"), forwardTo("ghost")),
      // Named per front: the data plane's rate-limited log is process-wide, keyed by route name.
      route(`refused-${front}`, match("/refused"), forwardTo("refused")),
      route("slow", match("/slow"), forwardTo("a"), { timeouts: { backendRequestMs: 200 } }),
      route("rr", match("/rr"), forwardTo("trio")),
      route(
        "weighted",
        match("/weighted"),
        forwardTo({ id: "wa", weight: 1 }, { id: "wb", weight: 3 }, { id: "wc", weight: 0 }),
      ),
      route("retried", match("/retry"), forwardTo("flaky"), {
        retry: { attempts: 1, codes: [503], backoffMs: 0 },
      }),
      route("not-retried", match("/noretry"), forwardTo("flaky2")),
    ];
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [
          listener([
            vhost("foo.example", fooRoutes),
            vhost("*.one.example", [route("one", match("/"), say("one-label"))], "WildcardOneLabel"),
            vhost("*.many.example", [route("many", match("/"), say("any-labels"))], "WildcardAnyLabels"),
            vhost("*.deep.many.example", [route("deep", match("/"), say("deeper"))], "WildcardAnyLabels"),
            vhost("*", [route("catch-all", match("/"), say("catch-all"))]),
          ]),
        ],
        [
          backend("a", [a.port]),
          backend("b", [b.port]),
          backend("down", [], { problem: "NoReadyEndpoints" }),
          backend("refused", [closed]),
          backend("trio", [a.port, b.port, c.port]),
          backend("wa", [a.port]),
          backend("wb", [b.port]),
          backend("wc", [c.port]),
          backend("flaky", [closed, a.port]),
          backend("flaky2", [closed, a.port]),
        ],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    await Promise.all([a.stop(), b.stop(), c.stop()]);
    if (restoreSink) setLogSink(restoreSink);
  });

  async function call(path: string, init: RequestInit & { host?: string } = {}) {
    const headers = new Headers(init.headers);
    headers.set("host", init.host ?? "foo.example");
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers, redirect: "manual" });
    const text = await res.text();
    const json = res.headers.get("content-type")?.includes("json")
      ? (JSON.parse(text) as Received)
      : undefined;
    return { status: res.status, text, json, headers: res.headers };
  }

  describe("virtual host selection", () => {
    test("exact host, case and port ignored", async () => {
      expect((await call("/direct", { host: "FOO.example:1234" })).status).toBe(418);
    });
    test("one-label wildcard takes exactly one label", async () => {
      expect((await call("/", { host: "x.one.example" })).text).toBe("one-label");
      expect((await call("/", { host: "x.y.one.example" })).text).toBe("catch-all");
    });
    test("any-labels wildcard: longest suffix wins", async () => {
      expect((await call("/", { host: "x.y.many.example" })).text).toBe("any-labels");
      expect((await call("/", { host: "x.deep.many.example" })).text).toBe("deeper");
      expect((await call("/", { host: "many.example" })).text).toBe("catch-all");
    });
    test("a selected host never falls through to the catch-all", async () => {
      const res = await call("/nothing-here");
      expect(res.status).toBe(404);
      expect(res.text).toBe("Not Found\n");
      expect(res.headers.get("server")).toBe("gatehouse");
    });
  });

  describe("route selection", () => {
    test("exact and element-wise prefix paths", async () => {
      expect((await call("/a")).json?.upstream).toBe("a");
      expect((await call("/a/")).status).toBe(404);
      expect((await call("/api/v1?x=1")).json).toMatchObject({ upstream: "b", path: "/api/v1?x=1" });
      expect((await call("/api")).json?.upstream).toBe("b");
      expect((await call("/apis")).status).toBe(404);
    });
    test("method, header and query conditions, in precedence order", async () => {
      expect((await call("/m", { method: "POST" })).text).toBe("post");
      expect((await call("/m")).text).toBe("any");
      expect((await call("/h", { headers: { "x-canary": "yes" } })).text).toBe("canary");
      expect((await call("/h", { headers: { "x-canary": "no" } })).text).toBe("stable");
      expect((await call("/q?a=1&v=2")).text).toBe("v2");
      expect((await call("/q?v=3&v=2")).text).toBe("v-any");
    });
  });

  describe("actions", () => {
    test("direct response", async () => {
      const res = await call("/direct");
      expect([res.status, res.text]).toEqual([418, "short and stout"]);
    });
    test("redirect to https drops the listener port", async () => {
      const res = await call("/secure/x?q=1");
      expect(res.status).toBe(301);
      expect(res.headers.get("location")).toBe("https://foo.example/secure/x?q=1");
    });
    test("redirect keeping the scheme keeps the listener's port and swaps the prefix", async () => {
      const res = await call("/old/page?q=1");
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`http://foo.example:${port}/new/page?q=1`);
    });
  });

  describe("errors", () => {
    test("every weight 0 → 500", async () => expect((await call("/zero")).status).toBe(500));
    test("backend with a problem → 503, unknown backend → 503", async () => {
      expect((await call("/down")).status).toBe(503);
      expect((await call("/ghost")).status).toBe(503);
      // Translation reports the cause once; the data plane logs it per request at debug level only.
      expect(logs.some((l) => l.includes('"backend unavailable"'))).toBe(false);
    });
    test("connection refused → 502, logged once per route per window", async () => {
      const res = await call("/refused");
      expect([res.status, res.text]).toEqual([502, "Bad Gateway\n"]);
      for (let i = 0; i < 3; i++) expect((await call("/refused")).status).toBe(502);
      const lines = logs.filter(
        (l) => l.includes('"upstream unreachable"') && l.includes(`"route":"refused-${front}"`),
      );
      expect(lines.length).toBe(1);
    });
    test("no response headers in time → 504, a quick answer on the same route is fine", async () => {
      const t0 = performance.now();
      expect((await call("/slow/1500")).status).toBe(504);
      expect(performance.now() - t0).toBeLessThan(1000);
      expect((await call("/slow/10")).status).toBe(200);
    });
    test("retry on a connect error reaches the next endpoint; without retry it is a 502", async () => {
      expect((await call("/retry")).json?.upstream).toBe("a");
      expect((await call("/noretry")).status).toBe(502);
    });
  });

  describe("balancing", () => {
    test("round robin across three endpoints", async () => {
      const seen: string[] = [];
      for (let i = 0; i < 6; i++) seen.push((await call("/rr")).json?.upstream ?? "?");
      expect(seen.slice(0, 3).sort()).toEqual(["a", "b", "c"]);
      expect(seen.slice(3)).toEqual(seen.slice(0, 3));
    });
    test("weights 1:3, weight 0 never picked", async () => {
      const count: Record<string, number> = {};
      for (let i = 0; i < 40; i++) {
        const u = (await call("/weighted")).json?.upstream ?? "?";
        count[u] = (count[u] ?? 0) + 1;
      }
      expect(count).toEqual({ a: 10, b: 30 });
    });
  });
});
