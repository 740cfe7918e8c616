/**
 * WebSocket proxying through a GatewayServer to a real Bun WebSocket upstream: frames both ways, the
 * upstream handshake as filters shaped it, subprotocols, close codes, failures before the upgrade, and
 * draining on stop. Run on both fronts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import type { Server } from "bun";
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
import { freePort } from "../../helpers/ports.ts";

interface Handshake {
  readonly url: string;
  readonly headers: Record<string, string>;
}

forEachFront("websocket proxying", (front) => {
  let upstream: Server<Handshake>;
  const upstreamCloses: { code: number; reason: string }[] = [];
  let gw: GatewayServer;
  let port: number;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    upstream = Bun.serve<Handshake>({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req, srv) {
        const headers: Record<string, string> = {};
        req.headers.forEach((v, k) => {
          headers[k] = v;
        });
        const offered = req.headers.get("sec-websocket-protocol")?.split(",")[0]?.trim();
        const ok = srv.upgrade(req, {
          data: { url: req.url, headers },
          headers: offered ? { "sec-websocket-protocol": offered } : {},
        });
        return ok ? undefined : new Response("upgrade expected", { status: 400 });
      },
      websocket: {
        open(ws) {
          ws.send(JSON.stringify(ws.data));
        },
        message(ws, m) {
          if (typeof m === "string" && m.startsWith("close:"))
            ws.close(Number(m.slice(6)), "upstream says bye");
          else ws.send(m);
        },
        close(_ws, code, reason) {
          upstreamCloses.push({ code, reason });
        },
      },
    });
    const closed = await freePort();
    const edits = { set: [{ name: "x-set", value: "yes" }], add: [], remove: ["x-remove"] };
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [
          listener([
            vhost("ws.example", [
              route("down", match("/down"), forwardTo("refused")),
              route("empty", match("/empty"), forwardTo("empty")),
              route("rewritten", match("/old"), forwardTo("up"), {
                filters: [
                  { kind: "URLRewrite", path: { type: "ReplacePrefixMatch", value: "/new" } },
                  { kind: "RequestHeaderModifier", edits },
                  {
                    kind: "ResponseHeaderModifier",
                    edits: { set: [{ name: "x-resp", value: "r" }], add: [], remove: [] },
                  },
                ],
              }),
              route("ws", match("/"), forwardTo("up")),
            ]),
          ]),
        ],
        [
          backend("up", [upstream.port ?? 0], { protocol: "websocket" }),
          backend("refused", [closed]),
          backend("empty", [], { problem: "NoReadyEndpoints" }),
        ],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    upstream.stop(true);
    if (restoreSink) setLogSink(restoreSink);
  });

  /** A client socket with its received messages (text as string, binary as byte arrays). */
  async function open(path: string, protocols: string[] = []) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, {
      headers: { host: "ws.example", "x-remove": "1" },
      protocols,
    });
    ws.binaryType = "arraybuffer";
    const got: (string | number[])[] = [];
    const waiters: (() => void)[] = [];
    ws.onmessage = (e) => {
      got.push(typeof e.data === "string" ? e.data : [...new Uint8Array(e.data as ArrayBuffer)]);
      for (const w of waiters.splice(0)) w();
    };
    const closed = new Promise<CloseEvent>((r) => ws.addEventListener("close", r));
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    const next = async (n: number) => {
      while (got.length < n) await new Promise<void>((r) => waiters.push(r));
      return got[n - 1];
    };
    return { ws, next, closed };
  }

  describe("routes to a websocket backend", () => {
    test("text and binary frames go both ways; the upstream saw the forwarded handshake", async () => {
      const c = await open("/chat?room=1");
      const hello = JSON.parse(String(await c.next(1))) as Handshake;
      expect(hello.url).toEndWith("/chat?room=1");
      expect(hello.headers.host).toBe("ws.example");
      expect(hello.headers["x-forwarded-for"]).toBe("127.0.0.1");
      expect(hello.headers["x-forwarded-proto"]).toBe("http");
      expect(hello.headers["x-remove"]).toBe("1");
      c.ws.send("Websocket Support!");
      expect(await c.next(2)).toBe("Websocket Support!");
      c.ws.send(new Uint8Array([1, 2, 3, 4, 5, 6, 7]));
      expect(await c.next(3)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      c.ws.close(4000, "client done");
      expect((await c.closed).code).toBe(4000);
      await Bun.sleep(20);
      expect(upstreamCloses.at(-1)).toEqual({ code: 4000, reason: "client done" });
    });

    test("route filters shape the upstream handshake; the subprotocol is negotiated end to end", async () => {
      const c = await open("/old/x", ["chat.v2", "chat.v1"]);
      expect(c.ws.protocol).toBe("chat.v2");
      const hello = JSON.parse(String(await c.next(1))) as Handshake;
      expect(hello.url).toEndWith("/new/x");
      expect(hello.headers["x-set"]).toBe("yes");
      expect(hello.headers["x-remove"]).toBeUndefined();
      c.ws.close();
    });

    test("an upstream close reaches the client with its code and reason", async () => {
      const c = await open("/");
      await c.next(1);
      c.ws.send("close:4001");
      const e = await c.closed;
      expect([e.code, e.reason]).toEqual([4001, "upstream says bye"]);
    });

    test("the 101 answer carries the route's response headers", async () => {
      const head = await new Promise<string>((resolve, reject) => {
        let buf = "";
        const s = connect({ host: "127.0.0.1", port }, () =>
          s.write(
            "GET /old/y HTTP/1.1\r\nHost: ws.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
          ),
        );
        s.on("data", (d: Buffer) => {
          buf += d.toString("latin1");
          const end = buf.indexOf("\r\n\r\n");
          if (end >= 0) {
            resolve(buf.slice(0, end).toLowerCase());
            s.destroy();
          }
        });
        s.on("error", reject);
      });
      expect(head).toStartWith("http/1.1 101");
      expect(head).toContain("x-resp: r");
      expect(head).toContain("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo=");
    });

    test("an unreachable upstream is a 502 and no endpoints a 503, before any upgrade", async () => {
      const handshake = {
        host: "ws.example",
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      };
      expect((await fetch(`http://127.0.0.1:${port}/down`, { headers: handshake })).status).toBe(502);
      expect((await fetch(`http://127.0.0.1:${port}/empty`, { headers: handshake })).status).toBe(503);
      const { "sec-websocket-key": _k, ...noKey } = handshake;
      expect((await fetch(`http://127.0.0.1:${port}/`, { headers: noKey })).status).toBe(400);
    });

    test("plain requests on a websocket backend are forwarded as usual", async () => {
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "ws.example" } });
      expect(res.status).toBe(400);
      expect(await res.text()).toBe("upgrade expected");
    });
  });

  test("stopping the gateway closes open websockets with 1001 and does not hang", async () => {
    const own = new GatewayServer({ bind: "127.0.0.1", front });
    await own.apply(
      model(
        [listener([vhost("*", [route("ws", match("/"), forwardTo("up"))])])],
        [backend("up", [upstream.port ?? 0])],
      ),
    );
    const p = own.ports()[0]?.port ?? 0;
    const ws = new WebSocket(`ws://127.0.0.1:${p}/`);
    await new Promise((r) => (ws.onopen = r));
    const closed = new Promise<CloseEvent>((r) => (ws.onclose = r));
    const t0 = performance.now();
    await own.stop();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect((await closed).code).toBe(1001);
  });
});
