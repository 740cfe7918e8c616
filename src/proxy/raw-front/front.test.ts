/**
 * The raw-socket front on the wire: request boundaries (pipelining, smuggling attempts, limits),
 * upstream connection reuse, the slow path's client address, and table swaps reaching open
 * connections. A real GatewayServer with `front: "raw"` and a real upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { GatewayServer } from "../listeners/server.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { startUpstream, type TestUpstream } from "../testing/upstream.ts";
import { relayedCount } from "./relayed-exchange.ts";

let up: TestUpstream;
let gw: GatewayServer;
let port = 0;

// In precedence order (the model is already sorted when it reaches the proxy).
const routes = (name: string) => [
  // Error pages send this route through the slow path (the internal Bun.serve app).
  route("slow", match("/slow-path"), forwardTo("up"), {
    errorPages: {
      codes: [599],
      backendId: "up",
      upstream: false,
      namespace: "",
      ingressName: "",
      serviceName: "",
      servicePort: "",
    },
  }),
  route("which", match("/which"), { kind: "DirectResponse", status: 200, body: name }),
  route("fast", match("/"), forwardTo("up")),
];

const gatewayModel = (name: string) =>
  model([listener([vhost("a.example", routes(name))])], [backend("up", [up.port])]);

beforeAll(async () => {
  up = startUpstream("up");
  gw = new GatewayServer({ bind: "127.0.0.1", front: "raw" });
  await gw.apply(gatewayModel("first"));
  port = gw.ports()[0]?.port ?? 0;
});

afterAll(async () => {
  await gw.stop();
  await up.stop();
});

/** Writes `parts` (pausing between them) on one connection and reads until the server closes it. */
function exchange(parts: string[], gapMs = 20): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port }, async () => {
      for (const p of parts) {
        socket.write(p);
        await Bun.sleep(gapMs);
      }
    });
    socket.setTimeout(5000, () => socket.destroy(new Error("timed out")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

const statuses = (wire: string) => [...wire.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: a.example\r\n${extra}\r\n`;
const last = (path: string) => get(path, "Connection: close\r\n");

describe("request boundaries", () => {
  test("pipelined requests are answered in order on one connection", async () => {
    const before = up.requests.length;
    const wire = await exchange([get("/p1") + get("/p2") + last("/p3")]);
    expect(statuses(wire)).toEqual([200, 200, 200]);
    expect(up.requests.slice(before).map((r) => r.path)).toEqual(["/p1", "/p2", "/p3"]);
    expect(wire.indexOf('"path":"/p1"')).toBeLessThan(wire.indexOf('"path":"/p2"'));
  });

  test("a request split across many writes is reassembled", async () => {
    const req = last("/split?x=1");
    const parts = req.match(/.{1,7}/gs) ?? [];
    const wire = await exchange(parts, 2);
    expect(statuses(wire)).toEqual([200]);
    expect(wire).toContain('"path":"/split?x=1"');
  });

  test("a body that looks like a request stays a body", async () => {
    const before = up.requests.length;
    const inner = "GET /smuggled HTTP/1.1\r\nHost: a.example\r\n\r\n";
    const wire = await exchange([
      `POST /outer HTTP/1.1\r\nHost: a.example\r\nContent-Length: ${inner.length}\r\n\r\n${inner}` +
        last("/after"),
    ]);
    expect(statuses(wire)).toEqual([200, 200]);
    const seen = up.requests.slice(before);
    expect(seen.map((r) => r.path)).toEqual(["/outer", "/after"]);
    expect(seen[0]?.body).toBe(inner);
  });

  test("Content-Length with Transfer-Encoding: 400, closed, nothing reaches the upstream", async () => {
    const before = up.requests.length;
    const wire = await exchange([
      "POST /cl-te HTTP/1.1\r\nHost: a.example\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n" +
        `0\r\n\r\n${get("/smuggled")}`,
    ]);
    expect(statuses(wire)).toEqual([400]);
    expect(wire.toLowerCase()).toContain("connection: close");
    expect(up.requests.length).toBe(before);
  });

  test("differing Content-Length values and obs-fold are 400", async () => {
    const before = up.requests.length;
    const two = "POST / HTTP/1.1\r\nHost: a.example\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab";
    expect(statuses(await exchange([two]))).toEqual([400]);
    expect(statuses(await exchange([get("/", "X-A: one\r\n two\r\n")]))).toEqual([400]);
    expect(up.requests.length).toBe(before);
  });

  test("a bad chunk size mid-body: the connection ends, the following bytes are never a request", async () => {
    const before = up.requests.length;
    const wire = await exchange([
      "POST /upload-bad HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
      `zz\r\n${get("/smuggled")}`,
    ]);
    expect(wire.includes("/smuggled")).toBe(false);
    expect(up.requests.slice(before).some((r) => r.path === "/smuggled")).toBe(false);
  });

  test("a chunked body is re-framed for the upstream", async () => {
    const wire = await exchange([
      "POST /chunked HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      "4;ext=x\r\nwiki\r\n5\r\npedia\r\n0\r\nX-Trailer: t\r\n\r\n",
    ]);
    expect(statuses(wire)).toEqual([200]);
    expect(wire).toContain('"body":"wikipedia"');
  });

  test("an oversized head is 431 and a missing Host on HTTP/1.1 is 400", async () => {
    const big = get("/", `X-Big: ${"b".repeat(70 * 1024)}\r\n`);
    expect(statuses(await exchange([big]))).toEqual([431]);
    expect(statuses(await exchange(["GET / HTTP/1.1\r\nConnection: close\r\n\r\n"]))).toEqual([400]);
  });
});

describe("forwarding", () => {
  test("keep-alive requests reuse one upstream connection", async () => {
    const before = up.clientPorts.length;
    await exchange([get("/r1"), get("/r2"), last("/r3")]);
    const ports = up.clientPorts.slice(before);
    expect(ports.length).toBe(3);
    expect(new Set(ports).size).toBe(1);
  });

  test("HEAD gets the head only; the connection stays usable", async () => {
    const wire = await exchange([`HEAD /h HTTP/1.1\r\nHost: a.example\r\n\r\n${last("/after-head")}`]);
    expect(statuses(wire)).toEqual([200, 200]);
    expect(wire).toContain('"path":"/after-head"');
    expect(wire.match(/"path"/g)?.length).toBe(1);
  });

  test("hop-by-hop fields are dropped and X-Forwarded-* set; a client cannot forge them", async () => {
    const before = up.requests.length;
    const fields =
      "X-Forwarded-For: 1.2.3.4\r\nX-Forwarded-Proto: https\r\nTE: trailers\r\nKeep-Alive: 5\r\n" +
      "Connection: close, X-Drop\r\nX-Drop: 1\r\n";
    await exchange([get("/hop", fields)]);
    const h = up.requests[before]?.headers ?? {};
    // An untrusted peer's X-Forwarded-For is never passed on (client/trusted-proxies.ts).
    expect(h["x-forwarded-for"]).toBe("127.0.0.1");
    expect(h["x-forwarded-proto"]).toBe("http");
    expect(h["x-forwarded-host"]).toBe("a.example");
    expect(h.te).toBeUndefined();
    expect(h["keep-alive"]).toBeUndefined();
    expect(h["x-drop"]).toBeUndefined();
  });

  test("the slow path sees the real client, never a forged relay header", async () => {
    const before = up.requests.length;
    const relayed = relayedCount();
    const wire = await exchange([
      last("/slow-path").replace("\r\n\r\n", "\r\nX-Gatehouse-Relayed-Client: 6.6.6.6\r\n\r\n"),
    ]);
    expect(statuses(wire)).toEqual([200]);
    expect(relayedCount()).toBe(relayed + 1);
    const h = up.requests[before]?.headers ?? {};
    expect(h["x-forwarded-for"]).toBe("127.0.0.1");
    expect(h["x-gatehouse-relayed-client"]).toBeUndefined();
  });

  test("a table swap reaches an open connection's next request", async () => {
    const socket = connect({ host: "127.0.0.1", port });
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(get("/which"));
    while (!Buffer.concat(chunks).toString().includes("first")) await Bun.sleep(5);
    await gw.apply(gatewayModel("second"));
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.write(last("/which"));
    await closed;
    const wire = Buffer.concat(chunks).toString();
    expect(statuses(wire)).toEqual([200, 200]);
    expect(wire.indexOf("second")).toBeGreaterThan(wire.indexOf("first"));
  });
});
