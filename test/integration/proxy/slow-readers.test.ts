/**
 * Clients that ask for a large response and then read nothing (slowhttptest -X's shape, here with
 * clients that never read at all). The bound by design: backpressure end to end. A client that cannot
 * take more stops the gateway reading its upstream, so the backend is held back too (it cannot write
 * the whole answer), and the gateway holds at most one upstream read per slow reader (Bun reads up to
 * 512 KB at a time; docs/http.md has the figures beside nginx's). Meanwhile a normal client is served.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket as NetSocket } from "node:net";
import type { Socket, TCPSocketListener } from "bun";
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

const BODY = 64 * 1024 * 1024;
const READERS = 40;
const PIECE = Buffer.alloc(1024 * 1024, 97);

interface Answer {
  left: number;
}

/** Bytes of response bodies the kernel took from the backend, all connections together. */
let accepted = 0;
let upstream: TCPSocketListener<Answer>;
let restoreSink: ((line: string) => void) | undefined;

/** Writes the rest of the answer as long as the kernel takes it (drain resumes). */
function pump(s: Socket<Answer>): void {
  while (s.data.left > 0) {
    const want = Math.min(PIECE.length, s.data.left);
    const n = s.write(PIECE, 0, want);
    if (n > 0) {
      s.data.left -= n;
      accepted += n;
    }
    if (n < want) return;
  }
}

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  upstream = Bun.listen<Answer>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { left: 0 };
      },
      data(s, chunk) {
        const small = chunk.toString("latin1").startsWith("GET /small ");
        const size = small ? 1000 : BODY;
        s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
        s.data.left = size;
        pump(s);
      },
      drain: pump,
    },
  });
});

afterAll(() => {
  upstream.stop(true);
  if (restoreSink) setLogSink(restoreSink);
});

forEachFront("clients that never read their response", (front) => {
  let gw: GatewayServer;
  let port: number;
  const readers: NetSocket[] = [];

  beforeAll(async () => {
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [listener([vhost("*", [route("all", match("/"), forwardTo("up"))])])],
        [backend("up", [upstream.port])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    for (const c of readers) c.destroy();
    await gw.stop(true);
  });

  test(`${READERS} slow readers of a 64 MB answer: the backends are held back, the gateway holds little`, async () => {
    Bun.gc(true);
    const before = process.memoryUsage().external;
    const acceptedBefore = accepted;
    for (let i = 0; i < READERS; i++) {
      const c = connect({ host: "127.0.0.1", port });
      c.on("connect", () => {
        c.write("GET /big HTTP/1.1\r\nHost: slow.example\r\n\r\n");
        c.pause();
      });
      c.on("error", () => {});
      readers.push(c);
    }
    // Until the backend has stopped being able to write (backpressure all the way back).
    let last = -1;
    for (let i = 0; i < 100 && accepted !== last; i++) {
      last = accepted;
      await Bun.sleep(150);
    }
    const perReader = (accepted - acceptedBefore) / READERS;
    // Each backend connection got far less than its answer out: kernel buffers on each hop, and what
    // the gateway holds, and no more.
    expect(perReader).toBeLessThan(BODY / 4);
    // The raw front: one upstream read (at most 512 KB) per slow reader in the buffers the process holds
    // (Buffers count as external memory; RSS in a shared test process is too noisy to bound), plus
    // slack. Without backpressure this is gigabytes (64 MB a reader). Bun.serve's own buffers are native
    // and not counted there, so on that front the backends being held back is what is checked.
    if (front === "raw") {
      const held = process.memoryUsage().external - before;
      expect(held).toBeLessThan(READERS * 1024 * 1024 + 48 * 1024 * 1024);
    }
    // A normal client is served meanwhile.
    const res = await fetch(`http://127.0.0.1:${port}/small`, { headers: { host: "probe.example" } });
    expect([res.status, (await res.arrayBuffer()).byteLength]).toEqual([200, 1000]);
  }, 30_000);
});
