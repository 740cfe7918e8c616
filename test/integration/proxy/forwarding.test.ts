/**
 * What a forwarded request and its response look like on both sides of the gateway: streaming,
 * hop-by-hop headers, X-Forwarded-*, request ids, framing, upstream connection reuse and filters. Run on
 * both fronts (`--front raw` and `--front bun`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import type { Filter } from "../../../src/model/index.ts";
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
import { parseResponse as parseWire, wireExchange } from "../../helpers/raw-http.ts";

forEachFront("forwarding", (front) => {
  let a: TestUpstream;
  let b: TestUpstream;
  let gw: GatewayServer;
  let port: number;
  const logs: string[] = [];
  let restoreSink: ((line: string) => void) | undefined;

  const edits = (set: [string, string][], add: [string, string][], remove: string[]) => ({
    set: set.map(([name, value]) => ({ name, value })),
    add: add.map(([name, value]) => ({ name, value })),
    remove,
  });

  beforeAll(async () => {
    restoreSink = setLogSink((l) => logs.push(l));
    [a, b] = [startUpstream("a"), startUpstream("b")];
    const headerFilters: Filter[] = [
      { kind: "RequestHeaderModifier", edits: edits([["x-set", "v"]], [["x-add", "two"]], ["x-remove"]) },
      { kind: "ResponseHeaderModifier", edits: edits([["x-resp", "r"]], [], ["x-upstream"]) },
    ];
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [
          listener([
            vhost("fwd.example", [
              route("headers", match("/hdr"), forwardTo("a"), { filters: headerFilters }),
              route("rewrite", match("/rewrite"), forwardTo("a"), {
                filters: [
                  {
                    kind: "URLRewrite",
                    hostname: "internal.example",
                    path: { type: "ReplacePrefixMatch", value: "/v2" },
                  },
                ],
              }),
              route(
                "per-backend",
                match("/per-backend"),
                forwardTo({
                  id: "a",
                  weight: 1,
                  filters: [{ kind: "RequestHeaderModifier", edits: edits([["x-backend", "a"]], [], []) }],
                }),
              ),
              route("mirror", match("/mirror"), forwardTo("a"), {
                filters: [{ kind: "RequestMirror", backendId: "b", percent: 100 }],
              }),
              route("cors", match("/cors"), forwardTo("a"), {
                filters: [
                  {
                    kind: "CORS",
                    allowOrigins: ["https://app.example"],
                    allowMethods: ["GET", "PUT"],
                    allowHeaders: ["x-h"],
                    exposeHeaders: ["x-upstream"],
                    allowCredentials: false,
                    maxAgeSeconds: 60,
                  },
                ],
              }),
              // Named per front: the data plane's rate-limited log is process-wide, keyed by route name.
              route(`weird-${front}`, match("/weird"), forwardTo("a"), {
                filters: [{ kind: "Teleport" } as unknown as Filter],
              }),
              route("to-b", match("/upload"), forwardTo("b")),
              route("rest", match("/"), forwardTo("a")),
            ]),
          ]),
        ],
        [backend("a", [a.port]), backend("b", [b.port])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    await Promise.all([a.stop(), b.stop()]);
    if (restoreSink) setLogSink(restoreSink);
  });

  async function call(path: string, init: RequestInit = {}) {
    const headers = new Headers(init.headers);
    if (!headers.has("host")) headers.set("host", "fwd.example");
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers, redirect: "manual" });
    const text = await res.text();
    const json = res.headers.get("content-type")?.includes("json")
      ? (JSON.parse(text) as Received)
      : undefined;
    return { status: res.status, text, json, headers: res.headers };
  }

  const wire = (lines: string[], body = "") =>
    wireExchange(port, `${lines.join("\r\n")}\r\nConnection: close\r\n\r\n${body}`);

  describe("streaming", () => {
    test("the first response chunk reaches the client before the upstream finishes", async () => {
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/stream`, { headers: { host: "fwd.example" } });
      const reader = res.body?.getReader();
      if (!reader) throw new Error("no body");
      const first = await reader.read();
      const tFirst = performance.now() - t0;
      let rest = "";
      for (let r = await reader.read(); !r.done; r = await reader.read())
        rest += new TextDecoder().decode(r.value);
      const tAll = performance.now() - t0;
      expect(new TextDecoder().decode(first.value)).toBe("chunk1;");
      expect(rest).toBe("chunk2;chunk3;");
      expect(tAll - tFirst).toBeGreaterThan(200);
    });

    test("the request body reaches the upstream while the client is still sending it", async () => {
      const before = b.uploads.length;
      const socket = connect({ host: "127.0.0.1", port });
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      socket.on("data", (c: Buffer) => chunks.push(c));
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      socket.write(
        "POST /upload HTTP/1.1\r\nHost: fwd.example\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\npart1\r\n",
      );
      const deadline = performance.now() + 2000;
      while (b.uploads.length === before && performance.now() < deadline) await Bun.sleep(10);
      expect(b.uploads.slice(before)).toEqual(["part1"]);
      socket.write("5\r\npart2\r\n0\r\n\r\n");
      await closed;
      const res = parseWire(Buffer.concat(chunks));
      expect(res.status).toBe(200);
      expect(res.body).toBe("part1part2");
    });

    test("a fixed-size body is forwarded with its length", async () => {
      const res = await call("/echo", { method: "POST", body: "hello body" });
      expect(res.json?.body).toBe("hello body");
      expect(res.json?.headers["content-length"]).toBe("10");
    });
  });

  describe("headers", () => {
    test("hop-by-hop request headers, and those Connection names, do not reach the upstream", async () => {
      const res = await wire([
        "GET /echo HTTP/1.1",
        "Host: fwd.example",
        "Keep-Alive: timeout=5",
        "TE: trailers",
        "Proxy-Connection: keep-alive",
        "Connection: X-Secret",
        "X-Secret: s",
        "X-Keep: k",
      ]);
      const got = JSON.parse(res.body) as Received;
      expect(got.headers["x-keep"]).toBe("k");
      for (const n of ["x-secret", "te", "keep-alive", "proxy-connection"])
        expect(got.headers[n]).toBeUndefined();
    });

    test("the response keeps Content-Length (no chunking, even when Connection names it) and loses hop-by-hop headers", async () => {
      const res = await wire(["GET /fixed HTTP/1.1", "Host: fwd.example"]);
      expect(res.status).toBe(200);
      expect(res.headers["content-length"]).toBe("17");
      expect(res.headers["transfer-encoding"]).toBeUndefined();
      expect(res.headers["x-hop"]).toBeUndefined();
      expect(res.headers["keep-alive"]).toBeUndefined();
      expect(res.headers["x-kept"]).toBe("yes");
      expect(res.headers.server).toBe("gatehouse");
      expect(res.headers.date).toBeDefined();
      expect(res.body).toBe("fixed-length body");
    });

    test("X-Forwarded-* describe this hop; Host is passed through", async () => {
      const res = await call("/echo", {
        headers: { host: "fwd.example:9999", "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "https" },
      });
      const h = res.json?.headers ?? {};
      expect(h.host).toBe("fwd.example:9999");
      // An untrusted peer's X-Forwarded-For is never passed on (client/trusted-proxies.ts).
      expect(h["x-forwarded-for"]).toBe("127.0.0.1");
      expect(h["x-forwarded-proto"]).toBe("http");
      expect(h["x-forwarded-host"]).toBe("fwd.example:9999");
      expect(h["x-forwarded-port"]).toBe(String(port));
    });

    test("a sane X-Request-Id is kept, a missing or bad one is generated", async () => {
      expect(
        (await call("/echo", { headers: { "x-request-id": "trace-42" } })).json?.headers["x-request-id"],
      ).toBe("trace-42");
      const generated = (await call("/echo")).json?.headers["x-request-id"];
      expect(generated).toMatch(/^[0-9a-f]{32}$/);
      const bad = (await call("/echo", { headers: { "x-request-id": "x".repeat(200) } })).json?.headers[
        "x-request-id"
      ];
      expect(bad).toMatch(/^[0-9a-f]{32}$/);
    });

    test("HEAD keeps the upstream's length and sends no body", async () => {
      const res = await wire(["HEAD /fixed HTTP/1.1", "Host: fwd.example"]);
      expect(res.status).toBe(200);
      expect(res.headers["content-length"]).toBe("17");
      expect(res.body).toBe("");
      const echoed = await wire(["HEAD /echo HTTP/1.1", "Host: fwd.example"]);
      expect(echoed.status).toBe(200);
      expect(a.requests.at(-1)?.method).toBe("HEAD");
    });
  });

  // What Bun's fetch does to the request on the way out, which the raw front does not: written exceptions,
  // pinned so a Bun upgrade that changes them shows (docs/http.md).
  describe("what reaches the upstream as sent (Bun's fetch: written exceptions)", () => {
    test("a GET with a body: forwarded with it (Bun's fetch: without it)", async () => {
      const res = await wire(["GET /hdr HTTP/1.1", "Host: fwd.example", "Content-Length: 5"], "hello");
      const got = JSON.parse(res.body) as Received;
      // The test upstream (Bun.serve) does not read a GET's body, so its framing is what shows it was sent.
      expect(got.headers["content-length"]).toBe(front === "raw" ? "5" : undefined);
    });

    test("no User-Agent or Accept sent: none added (Bun's fetch: its own)", async () => {
      const res = await wire(["GET /hdr HTTP/1.1", "Host: fwd.example"]);
      const got = JSON.parse(res.body) as Received;
      if (front === "raw")
        expect([got.headers["user-agent"], got.headers.accept]).toEqual([undefined, undefined]);
      else expect([got.headers["user-agent"]?.startsWith("Bun/"), got.headers.accept]).toEqual([true, "*/*"]);
    });

    test("a chunked body with a trailer: forwarded, the trailer dropped (Bun.serve: 400)", async () => {
      const body = "5\r\nhello\r\n0\r\nX-Checksum: 1\r\n\r\n";
      const res = await wire(["POST /hdr HTTP/1.1", "Host: fwd.example", "Transfer-Encoding: chunked"], body);
      if (front === "raw") {
        const got = JSON.parse(res.body) as Received;
        expect([res.status, got.body, got.headers["x-checksum"]]).toEqual([200, "hello", undefined]);
      } else expect(res.status).toBe(400);
    });
  });

  test("a client that disconnects cancels its upstream request", async () => {
    const socket = connect({ host: "127.0.0.1", port }, () =>
      socket.write("GET /slow/3000?gone HTTP/1.1\r\nHost: fwd.example\r\n\r\n"),
    );
    await Bun.sleep(150);
    socket.destroy();
    const deadline = performance.now() + 2000;
    while (!a.aborted.includes("/slow/3000?gone") && performance.now() < deadline) await Bun.sleep(10);
    expect(a.aborted).toContain("/slow/3000?gone");
  });

  test("upstream connections are reused across requests", async () => {
    const from = a.clientPorts.length;
    for (let i = 0; i < 20; i++) expect((await call("/reuse")).status).toBe(200);
    const ports = new Set(a.clientPorts.slice(from));
    expect(a.clientPorts.length - from).toBe(20);
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  describe("filters", () => {
    test("request and response header modifiers", async () => {
      const res = await call("/hdr", { headers: { "x-add": "one", "x-remove": "gone", "x-set": "old" } });
      const h = res.json?.headers ?? {};
      expect(h["x-set"]).toBe("v");
      expect(h["x-add"]).toBe("one,two");
      expect(h["x-remove"]).toBeUndefined();
      expect(res.headers.get("x-resp")).toBe("r");
      expect(res.headers.get("x-upstream")).toBeNull();
    });

    test("URL rewrite of host and path prefix", async () => {
      const res = await call("/rewrite/x?q=1");
      expect(res.json?.path).toBe("/v2/x?q=1");
      expect(res.json?.headers.host).toBe("internal.example");
      expect(res.json?.headers["x-forwarded-host"]).toBe("fwd.example");
    });

    test("a backend's own filters apply when it is picked", async () => {
      expect((await call("/per-backend")).json?.headers["x-backend"]).toBe("a");
    });

    test("mirror sends a copy to the other backend, with a body read whole; a streamed body is not mirrored", async () => {
      const copied = async (path: string) => {
        const deadline = performance.now() + 2000;
        while (!b.requests.some((r) => r.path === path) && performance.now() < deadline) await Bun.sleep(10);
        return b.requests.find((r) => r.path === path);
      };
      const res = await call("/mirror/1");
      expect(res.json?.upstream).toBe("a");
      expect(await copied("/mirror/1")).toBeDefined();
      const post = await call("/mirror/2", { method: "POST", body: "small body" });
      expect(post.json?.upstream).toBe("a");
      expect((await copied("/mirror/2"))?.body).toBe("small body");
      // Over the server's 64 KiB --request-buffer-bytes: streamed to "a", not copied.
      const big = "y".repeat(100 * 1024);
      const streamed = await call("/mirror/3", { method: "POST", body: big });
      expect(streamed.json?.upstream).toBe("a");
      expect(a.requests.find((r) => r.path === "/mirror/3")?.body.length).toBe(big.length);
      await Bun.sleep(50);
      expect(b.requests.some((r) => r.path === "/mirror/3")).toBe(false);
    });

    test("CORS preflight is answered by the gateway; responses carry the policy", async () => {
      const before = a.requests.length;
      const pre = await call("/cors", {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "PUT" },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(pre.headers.get("access-control-allow-methods")).toBe("GET, PUT");
      expect(a.requests.length).toBe(before);
      const res = await call("/cors", { headers: { origin: "https://app.example" } });
      expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(res.headers.get("access-control-expose-headers")).toBe("x-upstream");
      const other = await call("/cors", { headers: { origin: "https://evil.example" } });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    });

    test("a filter the gateway cannot run gives 500 and a log line, never a silent skip", async () => {
      expect((await call("/weird")).status).toBe(500);
      expect(logs.some((l) => l.includes(`"route":"weird-${front}"`) && l.includes("Teleport"))).toBe(true);
    });
  });
});
