/**
 * An upstream that stops taking the request body (nginx's `proxy_send_timeout`, `upstreamSendTimeoutMs`):
 * the client streams a large body to a backend that reads the head and then nothing. Before response
 * headers the client gets a 504 once the backend has taken nothing for the send limit (not after the whole
 * attempt limit); after an early answer (a 413 sent while the body is still coming) the connection is
 * closed at that limit instead of hanging with the client held back. Both connections are released.
 * The raw front times its own writes to the upstream; the fetch path (`--front bun`, and the raw front's
 * relayed requests) times how long fetch leaves the next chunk of the body untaken (upload-watch.ts),
 * and cannot release the upstream connection of an early answer (a written exception, pinned below).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, createServer, type Server, type Socket } from "node:net";
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

const SEND_LIMIT_MS = 500;
const ATTEMPT_LIMIT_MS = 6000;

let upstream: Server;
let upstreamPort = 0;
const upstreamSockets = new Set<Socket>();
let restoreSink: ((line: string) => void) | undefined;

beforeAll(async () => {
  restoreSink = setLogSink(() => {});
  upstream = createServer((s) => {
    upstreamSockets.add(s);
    s.on("close", () => upstreamSockets.delete(s));
    s.on("error", () => {});
    s.once("data", (d: Buffer) => {
      // The head came: read nothing more, so the body fills the kernel's buffers and then the gateway's.
      s.pause();
      if (/^POST (\/relayed)?\/early /.test(d.toString("latin1")))
        s.write("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n");
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
});

afterAll(() => {
  for (const s of upstreamSockets) s.destroy();
  upstream.close();
  if (restoreSink) setLogSink(restoreSink);
});

/** POSTs a 100 MB body as fast as the gateway takes it; resolves with what came back once the gateway closes. */
function upload(port: number, path: string): Promise<{ text: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const c = connect({ host: "127.0.0.1", port });
    const chunk = Buffer.alloc(256 * 1024, 120);
    let text = "";
    let open = true;
    const pump = () => {
      while (open && c.write(chunk));
    };
    c.on("connect", () => {
      c.write(`POST ${path} HTTP/1.1\r\nHost: up.example\r\nContent-Length: ${100 * 1024 ** 2}\r\n\r\n`);
      pump();
    });
    c.on("drain", pump);
    c.on("data", (d: Buffer) => {
      text += d.toString("latin1");
    });
    c.on("error", () => {});
    c.on("close", () => {
      open = false;
      resolve({ text, ms: performance.now() - t0 });
    });
    setTimeout(() => c.destroy(), 15_000);
  });
}

async function upstreamsClosed(): Promise<number> {
  for (let i = 0; i < 100 && upstreamSockets.size > 0; i++) await Bun.sleep(20);
  return upstreamSockets.size;
}

forEachFront("an upstream that takes no request body", (front) => {
  let gw: GatewayServer;
  let port: number;

  beforeAll(async () => {
    gw = new GatewayServer({
      bind: "127.0.0.1",
      front,
      defaultUpstreamTimeoutMs: ATTEMPT_LIMIT_MS,
      upstreamSendTimeoutMs: SEND_LIMIT_MS,
    });
    await gw.apply(
      model(
        [
          listener([
            vhost("up.example", [
              // A mirror makes the raw front relay the request to the listener app (the slow path).
              route("relayed", match("/relayed"), forwardTo("up"), {
                filters: [{ kind: "RequestMirror", backendId: "up", percent: 100 }],
              }),
              route("all", match("/"), forwardTo("up")),
            ]),
          ]),
        ],
        [backend("up", [upstreamPort])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(() => gw.stop(true));

  for (const path of ["/mute", "/relayed/mute"])
    test(`no response and no body taken: 504 at the send limit (${path})`, async () => {
      const { text, ms } = await upload(port, path);
      expect(text).toStartWith("HTTP/1.1 504");
      expect(ms).toBeLessThan(ATTEMPT_LIMIT_MS - 1500);
      expect(await upstreamsClosed()).toBe(0);
    });

  test("an early answer, then no body taken: the answer is passed on and the connection closed", async () => {
    const { text, ms } = await upload(port, "/early");
    expect(text).toStartWith("HTTP/1.1 413");
    expect(ms).toBeLessThan(ATTEMPT_LIMIT_MS - 1500);
    // A written exception: once fetch has the response, neither aborting it nor failing the body stream
    // closes a socket still sending that body (Bun 1.4.5), so on the fetch path that upstream connection
    // may stay until the upstream closes it (whether it does depends on how far fetch got with the body
    // when the answer came: both were seen in CI). Never more than that one.
    expect(await upstreamsClosed()).toBeLessThanOrEqual(front === "raw" ? 0 : 1);
    for (const s of upstreamSockets) s.destroy();
  });
});
