import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect as connectH2 } from "node:http2";
import { createServer } from "node:net";
import {
  type EchoServer,
  parseGoDuration,
  requestURI,
  startEchoServer,
  startH2cEchoServer,
} from "./echo-server.ts";
import { freePort } from "./ports.ts";
import { rawRequest } from "./raw-http.ts";

let echo: EchoServer;
const lines: string[] = [];

beforeAll(() => {
  echo = startEchoServer({
    namespace: "ns",
    ingress: "ing",
    service: "svc",
    pod: "pod-0",
    onLog: (l) => lines.push(l),
  });
});
afterAll(() => echo.stop());

const raw = (target: string, headers: [string, string][] = [], method = "GET") =>
  rawRequest({ host: "127.0.0.1", port: echo.port, target, headers, method });

describe("echo server", () => {
  test("echoes the request as upstream's JSON, byte for byte in shape", async () => {
    const res = await raw("/foo//bar?x=%2F&y=a+b", [
      ["Host", "example.com:8080"],
      ["x-forwarded-for", "10.0.0.1"],
      ["User-Agent", "Go-http-client/1.1"],
      ["Accept", "<&>"],
    ]);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-length"]).toBe(String(Buffer.byteLength(res.body)));
    expect(res.headers["transfer-encoding"]).toBeUndefined();
    // Go's encoder escapes & < > in strings.
    expect(res.body.split("\n")[1]).toBe(' "path": "/foo//bar?x=%2F\\u0026y=a+b",');
    expect(res.body).toContain('"Accept": [\n   "\\u003c\\u0026\\u003e"\n  ]');
    const json = JSON.parse(res.body);
    expect(json.path).toBe("/foo//bar?x=%2F&y=a+b");
    expect(Object.keys(json)).toEqual([
      "path",
      "host",
      "method",
      "proto",
      "headers",
      "httpPort",
      "namespace",
      "ingress",
      "service",
      "pod",
    ]);
    expect(json).toMatchObject({
      host: "example.com:8080",
      method: "GET",
      proto: "HTTP/1.1",
      httpPort: String(echo.port),
      namespace: "ns",
      ingress: "ing",
      service: "svc",
      pod: "pod-0",
    });
    expect(json.headers["X-Forwarded-For"]).toEqual(["10.0.0.1"]);
    expect(json.headers.Host).toBeUndefined();
    expect(Object.keys(json.headers)).toEqual([...Object.keys(json.headers)].sort());
    expect(lines.at(-1)).toMatch(
      /^Echoing back request made to \/foo\/\/bar\?x=%2F&y=a\+b to client \(127\.0\.0\.1:\d+\)$/,
    );
  });

  test("/health answers OK; // is collapsed for routing", async () => {
    expect(await (await fetch(`${echo.url}/health`)).text()).toBe("OK");
    const res = await raw("//health");
    expect(res.body).toBe("OK");
  });

  test("/status/NNN answers NNN; anything else under /status/ is 400", async () => {
    expect((await fetch(`${echo.url}/status/418`)).status).toBe(418);
    expect((await fetch(`${echo.url}/status/503`)).status).toBe(503);
    expect((await fetch(`${echo.url}/status/5000`)).status).toBe(400);
  });

  test("X-Echo-Set-Header sets response headers; a repeated name is appended with a comma", async () => {
    const res = await fetch(`${echo.url}/x`, {
      headers: { "X-Echo-Set-Header": "X-Foo: one, X-Bar:two,X-Foo:three" },
    });
    expect(res.headers.get("x-foo")).toBe("one,three");
    expect(res.headers.get("x-bar")).toBe("two");
    expect((await fetch(`${echo.url}/x`, { headers: { "X-Echo-Set-Header": "" } })).status).toBe(200);
  });

  test("?delay= sleeps for a Go duration; a bad one is a 500 with a message", async () => {
    const t0 = performance.now();
    expect((await fetch(`${echo.url}/slow?delay=150ms`)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    const bad = await fetch(`${echo.url}/x?delay=soon`);
    expect(bad.status).toBe(500);
    expect(await bad.json()).toEqual({ message: 'time: invalid duration "soon"' });
  });

  test("/retry/ fails the first succeedAfter attempts per uuid with responseCode, then echoes", async () => {
    const url = (uuid: string) => `${echo.url}/retry/a?responseCode=503&succeedAfter=2&uuid=${uuid}`;
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await fetch(url("u1"))).status);
    expect(codes).toEqual([503, 503, 200]);
    expect((await fetch(url("u2"))).status).toBe(503); // its own counter
  });

  test("/retry/ without responseCode resets the connection", async () => {
    // A fresh connection each time: fetch() would silently retry a reset pooled connection.
    const target = "/retry/b?succeedAfter=1&uuid=r1";
    await expect(raw(target)).rejects.toThrow(/ECONNRESET/);
    const ok = await fetch(`${echo.url}${target}`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { path: string }).path).toBe("/retry/b?succeedAfter=1&uuid=r1");
  });

  test("counts requests", async () => {
    const before = echo.requests;
    await fetch(`${echo.url}/health`);
    await fetch(`${echo.url}/a`);
    expect(echo.requests).toBe(before + 2);
  });
});

describe("websocket and h2c", () => {
  test("/ws echoes text and binary frames; a plain GET is refused", async () => {
    expect((await raw("/ws")).status).toBe(400);
    const ws = new WebSocket(`ws://127.0.0.1:${echo.port}/ws`);
    ws.binaryType = "arraybuffer";
    const got: (string | number[])[] = [];
    const done = new Promise<void>((resolve, reject) => {
      ws.onerror = () => reject(new Error("websocket error"));
      ws.onmessage = (e) => {
        got.push(typeof e.data === "string" ? e.data : [...new Uint8Array(e.data as ArrayBuffer)]);
        if (got.length === 2) resolve();
      };
    });
    await new Promise((resolve) => {
      ws.onopen = resolve;
    });
    ws.send("Websocket Support!");
    ws.send(new Uint8Array([1, 2, 3]));
    await done;
    ws.close();
    expect(got).toEqual(["Websocket Support!", [1, 2, 3]]);
  });

  test("the h2c server answers HTTP/2 prior knowledge with the same JSON and logs", async () => {
    const logs: string[] = [];
    const h2c = await startH2cEchoServer({ namespace: "ns", pod: "p-0", onLog: (l) => logs.push(l) });
    const session = connectH2(`http://127.0.0.1:${h2c.port}`);
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = session.request({ ":path": "/a?b=1", ":authority": "foo.com", "x-one": "1" });
        let status = 0;
        let body = "";
        req.on("response", (h) => {
          status = Number(h[":status"]);
        });
        req.on("data", (d: Buffer) => {
          body += d;
        });
        req.on("end", () => resolve({ status, body }));
        req.on("error", reject);
        req.end();
      });
      expect(status).toBe(200);
      const json = JSON.parse(body);
      expect(json).toMatchObject({
        path: "/a?b=1",
        host: "foo.com",
        proto: "HTTP/2.0",
        namespace: "ns",
        pod: "p-0",
      });
      expect(json.headers["X-One"]).toEqual(["1"]);
      expect(logs[0]).toStartWith("Echoing back request made to /a?b=1 to client (");
      expect(h2c.requests).toBe(1);
    } finally {
      session.close();
      await h2c.stop();
    }
  });
});

describe("helpers", () => {
  test("requestURI takes the target from Bun's URL as is", () => {
    expect(requestURI("http://h:1/a//b?x=%2F")).toBe("/a//b?x=%2F");
    expect(requestURI("http://h")).toBe("/");
  });

  test("parseGoDuration", () => {
    expect(parseGoDuration("1s")).toBe(1000);
    expect(parseGoDuration("1m30s")).toBe(90_000);
    expect(parseGoDuration("1.5h")).toBe(5_400_000);
    expect(parseGoDuration("250ms")).toBe(250);
    expect(parseGoDuration("0")).toBe(0);
    expect(parseGoDuration("10")).toBeUndefined();
    expect(parseGoDuration("1d")).toBeUndefined();
  });

  test("freePort returns a port that can be bound", async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  test("a fixed port can be given", async () => {
    const port = await freePort();
    const fixed = startEchoServer({ port, service: "fixed" });
    try {
      expect(fixed.port).toBe(port);
      expect(((await (await fetch(`http://127.0.0.1:${port}/`)).json()) as { service: string }).service).toBe(
        "fixed",
      );
    } finally {
      await fixed.stop();
    }
  });
});
