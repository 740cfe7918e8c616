/**
 * The raw front's idle limit on the wire, with a 1-second limit (Bun fires socket timeouts in steps of
 * about 4 s): an idle keep-alive connection closes; a request whose upstream answers after the limit is
 * still answered (the limit is lifted while the upstream is awaited); a client that stops reading a
 * response is dropped. The three run at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { GatewayServer } from "../listeners/server.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { startUpstream, type TestUpstream } from "../testing/upstream.ts";

let up: TestUpstream;
let gw: GatewayServer;
let port = 0;
const sockets: Socket[] = [];

beforeAll(async () => {
  up = startUpstream("up");
  gw = new GatewayServer({ bind: "127.0.0.1", front: "raw", idleTimeoutSeconds: 1 });
  await gw.apply(
    model(
      [listener([vhost("a.example", [route("all", match("/"), forwardTo("up"))])])],
      [backend("up", [up.port])],
    ),
  );
  port = gw.ports()[0]?.port ?? 0;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await gw.stop(true);
  await up.stop();
});

/** A connection that records what it receives and when the server closed it. */
function open(): Promise<{
  socket: Socket;
  bytes: () => number;
  text: () => string;
  closed: Promise<number>;
}> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closedAt: (t: number) => void = () => {};
    const closed = new Promise<number>((r) => {
      closedAt = r;
    });
    const socket = connect({ host: "127.0.0.1", port }, () =>
      resolve({
        socket,
        bytes: () => chunks.reduce((n, c) => n + c.length, 0),
        text: () => Buffer.concat(chunks).toString("latin1"),
        closed,
      }),
    );
    sockets.push(socket);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => {});
    socket.on("close", () => closedAt(performance.now()));
  });
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: a.example\r\n\r\n`;

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!check() && performance.now() < end) await Bun.sleep(20);
}

describe("idle limit (1 s)", () => {
  test.concurrent("an idle keep-alive connection is closed after the limit, not before", async () => {
    const c = await open();
    c.socket.write(get("/x"));
    await until(() => c.text().includes("\r\n\r\n"), 5000);
    const answered = performance.now();
    expect(c.text().startsWith("HTTP/1.1 200")).toBe(true);
    const closedAt = await Promise.race([c.closed, Bun.sleep(15_000).then(() => Number.NaN)]);
    expect(closedAt - answered).toBeGreaterThanOrEqual(500);
    expect(closedAt - answered).toBeLessThan(10_000);
  }, 30_000);

  test.concurrent("a response that comes after the limit is still delivered", async () => {
    const c = await open();
    c.socket.write(get("/slow/6000"));
    await until(() => c.text().includes('"path":"/slow/6000"'), 12_000);
    expect(c.text().startsWith("HTTP/1.1 200")).toBe(true);
  }, 30_000);

  test.concurrent("a client that stops reading a response is dropped", async () => {
    const c = await open();
    const size = 64 * 1024 * 1024;
    c.socket.write(get(`/big/${size}`));
    c.socket.pause();
    // Loopback buffers fill within moments; then the response stalls and the limit runs.
    await Bun.sleep(9000);
    c.socket.resume();
    const closedAt = await Promise.race([c.closed, Bun.sleep(15_000).then(() => Number.NaN)]);
    expect(Number.isNaN(closedAt)).toBe(false);
    expect(c.bytes()).toBeLessThan(size);
  }, 30_000);
});
