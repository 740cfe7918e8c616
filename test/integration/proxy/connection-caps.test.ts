/**
 * Caps on client connections (`maxConnections`, `maxConnectionsPerPeer`), on HTTP and HTTPS listeners of
 * the raw front: a connection over a cap is closed as it arrives (HTTPS: before its handshake) and counted;
 * one that closes makes room again; other peers are not affected by one peer's cap. A written exception:
 * Bun.serve (`--front bun`) has no hook to refuse a connection, so there no cap applies (pinned).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import type { RequestObserver } from "../../../src/proxy/request/observer.ts";
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
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";

let up: TestUpstream;
let restoreSink: ((line: string) => void) | undefined;

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  up = startUpstream("up");
});

afterAll(async () => {
  await up.stop();
  if (restoreSink) setLogSink(restoreSink);
});

/** A connection from `localAddress`; resolves with whether it still answers a request. */
function open(
  port: number,
  localAddress: string,
  tls: boolean,
): Promise<{ socket: Socket; served: boolean }> {
  return new Promise((resolve) => {
    const ask = () => socket.write("GET /x HTTP/1.1\r\nHost: caps.example\r\n\r\n");
    const socket: Socket = tls
      ? connectTls(
          { socket: connect({ host: "127.0.0.1", port, localAddress }), rejectUnauthorized: false },
          ask,
        )
      : connect({ host: "127.0.0.1", port, localAddress }, ask);
    socket.once("data", () => resolve({ socket, served: true }));
    socket.on("error", () => resolve({ socket, served: false }));
    socket.on("close", () => resolve({ socket, served: false }));
    setTimeout(() => resolve({ socket, served: false }), 2000);
  });
}

forEachFront("connection caps", (front) => {
  for (const tls of [false, true]) {
    test(`${tls ? "HTTPS" : "HTTP"}: per peer and in total; a closed connection makes room`, async () => {
      const refused: string[] = [];
      const observer = { connectionRefused: (r: string) => refused.push(r) } as unknown as RequestObserver;
      const gw = new GatewayServer({
        bind: "127.0.0.1",
        front,
        maxConnections: 3,
        maxConnectionsPerPeer: 2,
        observer,
      });
      const sockets: Socket[] = [];
      try {
        const cert = selfSigned("caps.example");
        const l = listener([vhost("caps.example", [route("r", match("/"), forwardTo("up"))])], {
          ...(tls ? { protocol: "HTTPS" as const, tls: { certificates: [cert] } } : {}),
        });
        await gw.apply(model([l], [backend("up", [up.port])]));
        const port = gw.ports()[0]?.port ?? 0;
        const served = async (from: string) => {
          const r = await open(port, from, tls);
          sockets.push(r.socket);
          return r.served;
        };
        const capped = front === "raw";
        expect([await served("127.0.0.2"), await served("127.0.0.2"), await served("127.0.0.2")]).toEqual([
          true,
          true,
          !capped,
        ]);
        expect(await served("127.0.0.3")).toBe(true);
        expect(await served("127.0.0.4")).toBe(!capped);
        if (capped) expect(refused).toEqual(["per_peer", "total"]);
        // One of the first peer's closes: room again.
        (sockets[0] as Socket).destroy();
        await Bun.sleep(100);
        expect(await served("127.0.0.4")).toBe(true);
        // Connections that close before sending anything give their room back too.
        for (const s of sockets) s.destroy();
        sockets.length = 0;
        const silent = [0, 1].map(() => connect({ host: "127.0.0.1", port, localAddress: "127.0.0.5" }));
        await Bun.sleep(100);
        for (const s of silent) s.destroy();
        await Bun.sleep(100);
        expect([await served("127.0.0.5"), await served("127.0.0.5")]).toEqual([true, true]);
      } finally {
        for (const s of sockets) s.destroy();
        await gw.stop(true);
      }
    });
  }
});
