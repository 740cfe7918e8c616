/**
 * Backends with protocol `h2c` (appProtocol `kubernetes.io/h2c`) are spoken to in cleartext HTTP/2 with
 * prior knowledge: the project's h2c echo server (HTTP/2 only, like upstream's echo-basic h2c port)
 * and a streaming node:http2 server stand behind a GatewayServer, on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
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
import { type EchoServer, startH2cEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";

forEachFront("h2c backends", (front) => {
  let echo: EchoServer;
  let streamer: Http2Server;
  let gw: GatewayServer;
  let port: number;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    echo = await startH2cEchoServer({ pod: "h2c-pod" });
    streamer = createServer();
    streamer.on("stream", (stream: ServerHttp2Stream, headers) => {
      let got = 0;
      stream.on("data", (c: Buffer) => {
        got += c.length;
      });
      stream.on("end", async () => {
        stream.respond({ ":status": 201, "set-cookie": ["a=1", "b=2"], "x-path": String(headers[":path"]) });
        stream.write(`got ${got};`);
        await Bun.sleep(200);
        stream.end("late;");
      });
    });
    await new Promise<void>((r) => streamer.listen(0, "127.0.0.1", () => r()));
    const streamerPort = (streamer.address() as { port: number }).port;
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [
          listener([
            vhost("*", [
              route("stream", match("/stream"), forwardTo("streamer")),
              route("slow", match("/slow"), forwardTo("echo"), { timeouts: { backendRequestMs: 150 } }),
              route("echo", match("/"), forwardTo("echo")),
            ]),
          ]),
        ],
        [
          backend("echo", [echo.port], { protocol: "h2c" }),
          backend("streamer", [streamerPort], { protocol: "h2c" }),
        ],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    await echo.stop();
    streamer.close();
    if (restoreSink) setLogSink(restoreSink);
  });

  test("requests reach an HTTP/2-only backend with path, query, host and headers", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/some/path?q=1`, {
      headers: { host: "h2.example", "x-a": "b" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      proto: string;
      path: string;
      host: string;
      headers: Record<string, string[]>;
    };
    expect(body.proto).toBe("HTTP/2.0");
    expect(body.path).toBe("/some/path?q=1");
    expect(body.host).toBe("h2.example");
    expect(body.headers["X-A"]).toEqual(["b"]);
    expect(body.headers["X-Forwarded-Proto"]).toEqual(["http"]);
  });

  test("the request body is sent; the response streams and keeps repeated headers", async () => {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/stream/x`, {
      method: "POST",
      body: "x".repeat(100_000),
    });
    expect(res.status).toBe(201);
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(res.headers.get("x-path")).toBe("/stream/x");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("got 100000;");
    expect(performance.now() - t0).toBeLessThan(180);
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toBe("late;");
  });

  test("many concurrent requests share the session", async () => {
    const all = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`http://127.0.0.1:${port}/n${i}`).then((r) => r.json() as Promise<{ path: string }>),
      ),
    );
    expect(all.map((b) => b.path)).toEqual(Array.from({ length: 30 }, (_, i) => `/n${i}`));
  });

  test("timeouts apply: no response headers in time is a 504", async () => {
    expect((await fetch(`http://127.0.0.1:${port}/slow?delay=400ms`)).status).toBe(504);
    expect((await fetch(`http://127.0.0.1:${port}/slow?delay=10ms`)).status).toBe(200);
  });

  test("an unreachable h2c endpoint is a 502", async () => {
    const own = new GatewayServer({ bind: "127.0.0.1", front });
    try {
      const dead = await startH2cEchoServer();
      const deadPort = dead.port;
      await dead.stop();
      await own.apply(
        model(
          [listener([vhost("*", [route("r", match("/"), forwardTo("gone"))])])],
          [backend("gone", [deadPort], { protocol: "h2c" })],
        ),
      );
      expect((await fetch(`http://127.0.0.1:${own.ports()[0]?.port}/`)).status).toBe(502);
    } finally {
      await own.stop();
    }
  });
});
