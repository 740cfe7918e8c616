/**
 * Lifecycle of an HTTPS listener that speaks HTTP/2 (`http2: true`) inside GatewayServer, on both fronts
 * (the raw front's node:tls listener with ALPN, the node:http2 listener beside Bun.serve): a stop lets HTTP/2
 * streams and HTTP/1.1 requests in flight finish (GOAWAY, then close), refuses new connections, and
 * resolves; a client that goes away mid-response frees its request (no leak in the in-flight count);
 * a listener that cannot bind its port throws at apply time, as Bun.serve does.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect as connectH2 } from "node:http2";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
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
import { rawRequest } from "../../helpers/raw-http.ts";

let echo: EchoServer;
let restoreSink: ((line: string) => void) | undefined;
const cert = selfSigned("drain.example");

const httpsModel = (port: number) =>
  model(
    [
      listener([vhost("drain.example", [route("all", match("/"), forwardTo("echo"))])], {
        name: "test/https",
        protocol: "HTTPS",
        port,
        tls: { certificates: [cert] },
      }),
    ],
    [backend("echo", [echo.port])],
  );

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  echo = startEchoServer();
});

afterAll(async () => {
  await echo.stop();
  if (restoreSink) setLogSink(restoreSink);
});

forEachFront("HTTPS with HTTP/2", (front) => {
  test("stop lets HTTP/2 and HTTP/1.1 requests in flight finish, then refuses connections", async () => {
    const gw = new GatewayServer({ bind: "127.0.0.1", http2: true, front });
    await gw.apply(httpsModel(0));
    const port = gw.ports()[0]?.port ?? 0;
    const session = connectH2(`https://127.0.0.1:${port}`, {
      servername: "drain.example",
      rejectUnauthorized: false,
    });
    session.on("error", () => {});
    const h2 = new Promise<number>((resolve, reject) => {
      const stream = session.request({ ":path": "/slow?delay=400ms", ":authority": "drain.example" });
      let status = 0;
      stream.on("response", (h) => {
        status = Number(h[":status"]);
      });
      stream.resume();
      stream.on("end", () => resolve(status));
      stream.on("error", reject);
    });
    const h1 = rawRequest({
      host: "127.0.0.1",
      port,
      target: "/slow?delay=400ms",
      headers: [["Host", "drain.example"]],
      tls: { servername: "drain.example" },
    });
    await Bun.sleep(100);
    expect(gw.pendingRequests()).toBe(2);
    const stopped = gw.stop();
    expect([await h2, (await h1).status]).toEqual([200, 200]);
    await stopped;
    session.destroy();
    await expect(
      rawRequest({ host: "127.0.0.1", port, target: "/", headers: [["Host", "drain.example"]], tls: {} }),
    ).rejects.toThrow();
  });

  test("a client that goes away mid-response frees its request, even from a body that never ends", async () => {
    // An upstream that sends one chunk and then nothing, forever (a stream the client abandons).
    const endless = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode("first chunk\n"));
            },
          }),
        ),
    });
    const gw = new GatewayServer({ bind: "127.0.0.1", http2: true, front });
    try {
      const m = httpsModel(0);
      await gw.apply({ ...m, backends: { ...m.backends, echo: backend("echo", [endless.port ?? 0]) } });
      const port = gw.ports()[0]?.port ?? 0;
      for (const path of ["/stream", "/stream-again"]) {
        const session = connectH2(`https://127.0.0.1:${port}`, {
          servername: "drain.example",
          rejectUnauthorized: false,
        });
        session.on("error", () => {});
        const firstChunk = new Promise<void>((resolve) => {
          const stream = session.request({ ":path": path, ":authority": "drain.example" });
          stream.on("error", () => {});
          stream.once("data", () => resolve());
        });
        await firstChunk;
        expect(gw.pendingRequests()).toBe(1);
        session.destroy();
        for (let i = 0; i < 50 && gw.pendingRequests() > 0; i++) await Bun.sleep(10);
        expect(gw.pendingRequests()).toBe(0);
      }
    } finally {
      await gw.stop();
      endless.stop(true);
    }
  });

  test("a port already taken fails the apply and leaves nothing open", async () => {
    const first = new GatewayServer({ bind: "127.0.0.1", http2: true, front });
    await first.apply(httpsModel(0));
    const port = first.ports()[0]?.port ?? 0;
    // A plain server (not reusePort) holds the port: the HTTP/2 listener cannot join it.
    await first.stop();
    const holder = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    try {
      const second = new GatewayServer({ bind: "127.0.0.1", http2: true, front });
      await expect(second.apply(httpsModel(port))).rejects.toThrow("cannot bind");
      expect(second.ports()).toEqual([]);
    } finally {
      holder.stop(true);
    }
  });
});
