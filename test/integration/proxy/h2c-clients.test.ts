/**
 * Clients speaking cleartext HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3) to a plain-HTTP listener,
 * on either front: a real node:http2 client, concurrent streams with bodies, through to an HTTP/1.1
 * upstream. The client's address must be the real one (its own source address, 127.0.0.2 here), the
 * preface may arrive in pieces, and a connection that breaks the protocol is closed alone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ClientHttp2Session, connect as h2connect } from "node:http2";
import { type Socket, connect as tcpConnect } from "node:net";
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

interface Echoed {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

let upstream: Server<undefined>;
let port: number;
let restoreSink: ((line: string) => void) | undefined;
const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

beforeAll(async () => {
  restoreSink = setLogSink(() => {});
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const delay = Number(u.searchParams.get("delay") ?? 0);
      if (delay > 0) await Bun.sleep(delay);
      const echoed: Echoed = {
        method: req.method,
        url: u.pathname + u.search,
        headers: Object.fromEntries(req.headers),
        body: await req.text(),
      };
      return Response.json(echoed);
    },
  });
});

afterAll(() => {
  upstream.stop(true);
  if (restoreSink) setLogSink(restoreSink);
});

/** An h2c session from `localAddress` (any 127/8 address is this host's loopback). */
function session(localAddress = "127.0.0.2"): ClientHttp2Session {
  const s = h2connect(`http://h2c.example:${port}`, {
    createConnection: () => tcpConnect({ host: "127.0.0.1", port, localAddress }),
  });
  s.on("error", () => {});
  return s;
}

function request(
  s: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const r = s.request(headers, { endStream: body === undefined });
    let status = 0;
    let text = "";
    r.setEncoding("utf8");
    r.on("response", (h) => {
      status = Number(h[":status"]);
    });
    r.on("data", (d: string) => {
      text += d;
    });
    r.on("end", () => resolve({ status, text }));
    r.on("error", reject);
    if (body !== undefined) r.end(body);
  });
}

/** A raw connection to the listener; resolves with everything it received once the gateway closed it. */
function rawExchange(parts: (string | Buffer)[], gapMs = 20): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock: Socket = tcpConnect({ host: "127.0.0.1", port }, async () => {
      sock.setNoDelay(true);
      for (const p of parts) {
        sock.write(p);
        await Bun.sleep(gapMs);
      }
    });
    const got: Buffer[] = [];
    sock.on("data", (d: Buffer) => got.push(d));
    sock.on("close", () => resolve(Buffer.concat(got)));
    sock.on("error", reject);
  });
}

// Both fronts: the raw one hands h2c connections to node:http2, Bun.serve speaks it itself (`http2`).
forEachFront("clients speaking h2c with prior knowledge", (front) => {
  let gw: GatewayServer;

  beforeAll(async () => {
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [listener([vhost("h2c.example", [route("echo", match("/"), forwardTo("up"))])])],
        [backend("up", [upstream.port as number])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(() => gw.stop(true));

  // RFC 9113 §8.3.1: a Host naming another authority than :authority makes the request malformed. The raw
  // front answers 400 (as nginx does) and serves a Host equal to :authority. A written exception: Bun.serve,
  // which serves h2c itself, resets the stream (PROTOCOL_ERROR) whenever both are sent, equal or not.
  // Either way nothing is routed by the one and forwarded with the other.
  test("a Host field that disagrees with :authority is refused", async () => {
    const authority = `h2c.example:${port}`;
    const ask = async (host: string) => {
      // A session each: Bun.serve's reset may take the whole session down.
      const s = session();
      try {
        return String(
          (await request(s, { ":method": "GET", ":path": "/x", ":authority": authority, host })).status,
        );
      } catch (err) {
        return (err as Error).message;
      } finally {
        s.close();
      }
    };
    const reset = "Stream closed with error code NGHTTP2_PROTOCOL_ERROR";
    expect(await ask("evil.example")).toBe(front === "raw" ? "400" : reset);
    expect(await ask(`H2C.example:${port}`)).toBe(front === "raw" ? "200" : reset);
  });

  test("concurrent streams with bodies reach the upstream intact, from the client's real address", async () => {
    const s = session();
    const sent = Array.from({ length: 8 }, (_, i) => ({
      method: i % 2 === 0 ? "POST" : "PUT",
      path: `/items/${i}?n=${i}&tag=a%20b`,
      body: `body ${i} `.repeat(1000 * (i + 1)),
    }));
    const got = await Promise.all(
      sent.map((r) =>
        request(
          s,
          {
            ":method": r.method,
            ":path": r.path,
            "x-case": r.path,
            // Neither may change the address the gateway records for this client.
            "x-gatehouse-relayed-client": "9.9.9.9",
          },
          r.body,
        ),
      ),
    );
    const get = await request(s, { ":method": "GET", ":path": "/q?delay=50&x=1" });
    s.close();
    for (const [i, r] of sent.entries()) {
      const res = got[i] as { status: number; text: string };
      expect(res.status).toBe(200);
      const e = JSON.parse(res.text) as Echoed;
      expect(e.method).toBe(r.method);
      expect(e.url).toBe(r.path);
      expect(e.body).toBe(r.body);
      expect(e.headers["x-case"]).toBe(r.path);
      expect(e.headers.host).toBe(`h2c.example:${port}`);
      expect(e.headers["x-forwarded-for"]).toBe("127.0.0.2");
      expect(e.headers["x-forwarded-proto"]).toBe("http");
    }
    expect(get.status).toBe(200);
    const e = JSON.parse(get.text) as Echoed;
    expect([e.method, e.url, e.body, e.headers["x-forwarded-for"]]).toEqual([
      "GET",
      "/q?delay=50&x=1",
      "",
      "127.0.0.2",
    ]);
  });

  test("a preface split across reads is still recognised", async () => {
    // A SETTINGS frame (empty), then HEADERS would follow; the server answers with its own SETTINGS.
    const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    const parts = [
      PREFACE.slice(0, 1),
      PREFACE.slice(1, 9),
      PREFACE.slice(9, 23),
      PREFACE.slice(23),
      settings,
    ];
    const out = await Promise.race([
      rawExchange([...parts, "garbage that is no frame at all"]),
      Bun.sleep(3000),
    ]);
    expect(out).toBeInstanceOf(Buffer);
    const bytes = out as Buffer;
    // HTTP/2 frames, not an HTTP/1.1 answer: the first is the server's SETTINGS (type 4).
    expect(bytes.subarray(0, 8).toString("latin1")).not.toContain("HTTP/1.1");
    expect(bytes[3]).toBe(4);
  });

  test("garbage after the preface, or a broken preface, closes that connection only", async () => {
    const s = session("127.0.0.1");
    const slow = request(s, { ":method": "GET", ":path": "/slow?delay=300" });
    await Bun.sleep(50);
    const closedWithin = (parts: string[]) =>
      Promise.race([rawExchange(parts), Bun.sleep(3000).then(() => Buffer.from("still open"))]);
    const [afterPreface, badPreface] = await Promise.all([
      closedWithin([`${PREFACE}\x00\x00\x08\x01\x00\x00\x00\x00\x01not a frame of the right size`]),
      closedWithin(["PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"]),
    ]);
    // Closed (Bun's node:http2 ends a session on a stream transport without sending GOAWAY; measured).
    expect(afterPreface.toString("latin1")).not.toMatch(/still open|HTTP\/1/);
    // Not the preface: an HTTP/1.1 request the parser refuses.
    expect(badPreface.toString("latin1")).toMatch(/^HTTP\/1\.1 [45]\d\d /);
    const res = await slow;
    expect(res.status).toBe(200);
    expect((JSON.parse(res.text) as Echoed).headers["x-forwarded-for"]).toBe("127.0.0.1");
    s.close();
    const h1 = await fetch(`http://127.0.0.1:${port}/h1`, { headers: { host: "h2c.example" } });
    expect(h1.status).toBe(200);
  });

  test("an HTTP/1.1 Upgrade: h2c request gets an ordinary HTTP/1.1 answer", async () => {
    const out = await rawExchange([
      "GET /up HTTP/1.1\r\nHost: h2c.example\r\nConnection: Upgrade, HTTP2-Settings, close\r\n" +
        "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
    ]);
    const text = out.toString("latin1");
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain('"url":"/up"');
  });

  test("a graceful stop lets streams in flight finish, then closes the session", async () => {
    const own = new GatewayServer({ bind: "127.0.0.1", front });
    await own.apply(
      model(
        [listener([vhost("*", [route("echo", match("/"), forwardTo("up"))])])],
        [backend("up", [upstream.port as number])],
      ),
    );
    const ownPort = own.ports()[0]?.port ?? 0;
    const s = h2connect(`http://127.0.0.1:${ownPort}`);
    s.on("error", () => {});
    const closed = new Promise<void>((r) => s.on("close", () => r()));
    const inFlight = request(s, { ":method": "GET", ":path": "/drain?delay=300" });
    await Bun.sleep(100);
    const stopped = own.stop();
    const res = await inFlight;
    expect(res.status).toBe(200);
    await stopped;
    await closed;
  });
});
