/**
 * Clients that send their request body slowly, on both fronts: a body up to `requestBufferBytes` is read
 * whole before an upstream connection is taken (nginx's `proxy_request_buffering`), so a slow sender holds
 * no backend connection; a larger one is streamed as it comes. A client silent mid-body longer than the
 * body timeout gets 408 and the connection is closed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import type { TCPSocketListener } from "bun";
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
import { forEachFront } from "../../helpers/fronts.ts";

const SET_HEADER: Filter = {
  kind: "ResponseHeaderModifier",
  edits: { set: [{ name: "x-route", value: "edited" }], add: [], remove: [] },
};

/** An upstream that counts the request heads it sees and answers once a request's whole body is in. */
let upstream: TCPSocketListener<{ got: string; counted: boolean }>;
let heads = 0;
let restoreSink: ((line: string) => void) | undefined;

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  upstream = Bun.listen<{ got: string; counted: boolean }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { got: "", counted: false };
      },
      data(s, chunk) {
        s.data.got += chunk.toString("latin1");
        const at = s.data.got.indexOf("\r\n\r\n");
        if (at >= 0 && !s.data.counted) {
          s.data.counted = true;
          heads++;
        }
        const length = Number(/content-length: (\d+)/i.exec(s.data.got)?.[1] ?? 0);
        if (at >= 0 && s.data.got.length - at - 4 >= length) {
          s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${String(length).length}\r\n\r\n${length}`);
          s.data.got = "";
          s.data.counted = false;
        }
      },
    },
  });
});

afterAll(() => {
  upstream.stop(true);
  if (restoreSink) setLogSink(restoreSink);
});

/** Opens a connection and sends a POST head announcing `length` bytes plus `first` of them. */
function startUpload(
  port: number,
  length: number,
  first: string,
  path = "/up",
): { socket: Socket; closed: Promise<string> } {
  const socket = connect({ host: "127.0.0.1", port }, () =>
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: slow.example\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n${first}`,
    ),
  );
  let text = "";
  socket.on("data", (d: Buffer) => {
    text += d.toString("latin1");
  });
  socket.on("error", () => {});
  const closed = new Promise<string>((resolve) => socket.on("close", () => resolve(text)));
  return { socket, closed };
}

forEachFront("slow request bodies", (front) => {
  let gw: GatewayServer;
  let port: number;

  beforeAll(async () => {
    gw = new GatewayServer({
      bind: "127.0.0.1",
      front,
      requestBufferBytes: 4096,
      clientBodyTimeoutMs: 1000,
    });
    await gw.apply(
      model(
        [
          listener([
            vhost("slow.example", [
              route("edited", match("/edited"), forwardTo("up"), { filters: [SET_HEADER] }),
              route("mirrored", match("/mirrored"), forwardTo("up"), {
                filters: [
                  {
                    kind: "RequestMirror",
                    url: { scheme: "http", hostname: "127.0.0.1", port: upstream.port, path: "" },
                    percent: 100,
                  },
                  SET_HEADER,
                ],
              }),
              route("up", match("/"), forwardTo("up")),
            ]),
          ]),
        ],
        [backend("up", [upstream.port])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(() => gw.stop(true));

  test("a small body is read whole before anything is sent upstream", async () => {
    const before = heads;
    const { socket, closed } = startUpload(port, 1000, "a".repeat(100));
    await Bun.sleep(300);
    expect(heads).toBe(before);
    socket.write(`${"b".repeat(900)}`);
    const got = await closed;
    expect(got).toStartWith("HTTP/1.1 200");
    expect(got.endsWith("1000")).toBe(true);
    expect(heads).toBe(before + 1);
  });

  test("a body larger than the buffer is streamed: the upstream is reached before it ends", async () => {
    const before = heads;
    const { socket, closed } = startUpload(port, 100_000, "a".repeat(10_000));
    for (let i = 0; i < 50 && heads === before; i++) await Bun.sleep(20);
    expect(heads).toBe(before + 1);
    socket.write("b".repeat(90_000));
    expect(await closed).toStartWith("HTTP/1.1 200");
  });

  test("a sender silent mid-body is dropped after the body timeout", async () => {
    const t0 = performance.now();
    const { closed } = startUpload(port, 1000, "a".repeat(100));
    const got = await Promise.race([closed, Bun.sleep(12_000).then(() => "still open")]);
    const ms = performance.now() - t0;
    expect(got).not.toBe("still open");
    expect(got).toStartWith("HTTP/1.1 408");
    // Bun applies socket timeouts in steps of 4 s, so the raw front's clock runs one step long (never
    // short: settings.ts SOCKET_TIMER_STEP_S); the Bun path times the read itself.
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(front === "raw" ? 9500 : 3000);
  }, 15_000);

  test("the 408 gets the route's response filters whether or not the route mirrors", async () => {
    const answers = await Promise.all(
      ["/edited", "/mirrored"].map((path) => startUpload(port, 1000, "a".repeat(100), path).closed),
    );
    const heads = answers.map((a) => a.slice(0, a.indexOf("\r\n\r\n")));
    for (const head of heads) expect(head).toStartWith("HTTP/1.1 408");
    const edited = heads.map((h) => /^x-route: edited$/im.test(h));
    expect(edited[1]).toBe(edited[0]);
    // The raw front answers this 408 from the connection, before any route filter: a written exception
    // (docs/http.md), pinned here both ways.
    expect(edited).toEqual(front === "bun" ? [true, true] : [false, false]);
  }, 15_000);
});
