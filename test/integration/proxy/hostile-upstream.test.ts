/**
 * Upstreams that misbehave, on both fronts: a response head larger than the gateway takes (64 KB, as the
 * raw front's parser and, measured on Bun's path, the full request path) is a 502, never relayed; one
 * within the limit is served. An upstream that goes silent mid-body is cut after the read-gap limit
 * (`upstreamReadTimeoutMs`, nginx's `proxy_read_timeout`), freeing both connections, instead of holding
 * them until the client's idle timeout. One that closes short of its Content-Length is a 502 (before the
 * head is out) or a cut the client sees, never an orderly end or a 500. The backend is a raw socket, so
 * it can send what no HTTP library would. A transfer coding other than chunked (`gzip, chunked`) is a 502
 * as in nginx: relayed, its bytes would reach the client still coded with the coding's name dropped.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
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
import { wireGet } from "../../helpers/raw-http.ts";

let upstream: TCPSocketListener<undefined>;
/** Backend connections closed so far (a stalled one must be closed by the gateway). */
let closedUpstreams = 0;
let restoreSink: ((line: string) => void) | undefined;
const logs: string[] = [];

/** Answers `/head/N` with a response whose one extra field is N bytes long. */
function answer(s: Socket<undefined>, chunk: Buffer): void {
  if (/^GET (\/relayed)?\/stall /.test(chunk.toString("latin1"))) {
    // The head and 10 of 100 bytes, then silence.
    s.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
    return;
  }
  if (/^GET (\/relayed)?\/short /.test(chunk.toString("latin1"))) {
    // The differential run's `short-body` fault: 10 of 100 bytes, then the connection closes.
    s.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
    s.end();
    return;
  }
  if (/^GET (\/relayed)?\/coded /.test(chunk.toString("latin1"))) {
    const body = gzipSync("hello");
    s.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n`);
    s.write(`${body.length.toString(16)}\r\n`);
    s.write(body);
    s.write("\r\n0\r\n\r\n");
    s.end();
    return;
  }
  const m = /^GET \/head\/(\d+) /.exec(chunk.toString("latin1"));
  const size = Number(m?.[1] ?? 0);
  s.write(
    `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(size)}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`,
  );
  s.end();
}

beforeAll(() => {
  restoreSink = setLogSink((line) => logs.push(line));
  upstream = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data: answer,
      close: () => {
        closedUpstreams++;
      },
    },
  });
});

afterAll(() => {
  upstream.stop(true);
  if (restoreSink) setLogSink(restoreSink);
});

forEachFront("hostile upstreams", (front) => {
  let gw: GatewayServer;
  let port: number;

  beforeAll(async () => {
    // Bun.serve has no read-gap clock of its own: there its idle timeout bounds a stall (1 s here).
    gw = new GatewayServer({
      bind: "127.0.0.1",
      front,
      upstreamReadTimeoutMs: 400,
      ...(front === "bun" ? { idleTimeoutSeconds: 1 } : {}),
    });
    await gw.apply(
      model(
        [
          // Named per front: the log line checked below is rate-limited per listener.
          listener(
            [
              vhost("up.example", [
                // A mirror makes the raw front relay the request to the listener app (the slow path).
                route("relayed", match("/relayed"), forwardTo("up"), {
                  filters: [{ kind: "RequestMirror", backendId: "up", percent: 100 }],
                }),
                route("all", match("/"), forwardTo("up")),
              ]),
            ],
            { name: `test/${front}` },
          ),
        ],
        [backend("up", [upstream.port])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(() => gw.stop(true));

  test("a response head over 64 KB is a 502; one of 60 KB is served", async () => {
    for (const size of [100 * 1024, 1024 * 1024])
      expect((await wireGet(port, `/head/${size}`, "up.example")).status).toBe(502);
    const ok = await wireGet(port, `/head/${60 * 1024}`, "up.example");
    expect([ok.status, ok.headers["x-big"]?.length, ok.body]).toEqual([200, 60 * 1024, "ok"]);
  });

  test("a transfer coding other than chunked is a 502, never relayed still coded", async () => {
    for (const path of ["/coded", "/relayed/coded"])
      expect([path, (await wireGet(port, path, "up.example")).status]).toEqual([path, 502]);
  });

  /** One GET on a fresh connection: everything the gateway sent until it closed. */
  const shortGet = (path: string) =>
    new Promise<string>((resolve) => {
      const c = connect({ host: "127.0.0.1", port }, () =>
        c.write(`GET ${path} HTTP/1.1\r\nHost: up.example\r\nConnection: close\r\n\r\n`),
      );
      let text = "";
      c.on("data", (d: Buffer) => {
        text += d.toString("latin1");
      });
      c.on("error", () => {});
      c.on("close", () => resolve(text));
      setTimeout(() => c.destroy(), 5000);
    });

  let shortFrom = -1;
  for (const path of ["/short", "/relayed/short"]) {
    test(`an upstream that closes short of its Content-Length: a 502 or a cut, never a 500 or an orderly end (${path})`, async () => {
      // The log is rate-limited per listener: lines since this front's first such test count.
      if (shortFrom < 0) shortFrom = logs.length;
      // Whether the fetch path sees the cut before Bun.serve has begun the head is a race: several tries.
      const answers: string[] = [];
      for (let i = 0; i < 6; i++) {
        const got = await shortGet(path);
        if (got.startsWith("HTTP/1.1 502")) {
          answers.push("502");
          continue;
        }
        expect(got).toStartWith("HTTP/1.1 200");
        const end = got.indexOf("\r\n\r\n");
        const length = /\r\ncontent-length: *(\d+)/i.exec(got.slice(0, end))?.[1];
        if (length !== undefined) expect(got.length - end - 4).toBeLessThan(Number(length));
        else expect(got).not.toContain("\r\n0\r\n\r\n");
        answers.push("cut");
      }
      // The raw front serves /short itself: its head is out before it reads the body, so always a cut.
      if (front === "raw" && path === "/short") expect(new Set(answers)).toEqual(new Set(["cut"]));
      // A 502 of the fetch path is logged (a cut there is printed by Bun itself: a written exception).
      const logged = logs
        .slice(shortFrom)
        .some((l) => l.includes("upstream closed before its response was complete"));
      if (answers.includes("502")) expect(logged).toBe(true);
    });
  }

  for (const path of ["/stall", "/relayed/stall"]) {
    test(`an upstream silent mid-body is cut after the read-gap limit, both connections closed (${path})`, async () => {
      const before = closedUpstreams;
      const t0 = performance.now();
      const got = await new Promise<string>((resolve) => {
        const c = connect({ host: "127.0.0.1", port }, () =>
          c.write(`GET ${path} HTTP/1.1\r\nHost: up.example\r\n\r\n`),
        );
        let text = "";
        c.on("data", (d: Buffer) => {
          text += d.toString("latin1");
        });
        c.on("error", () => {});
        c.on("close", () => resolve(text));
        setTimeout(() => c.destroy(), 15_000);
      });
      const ms = performance.now() - t0;
      expect(got).toStartWith("HTTP/1.1 200");
      // Cut, never an orderly end: the 100 bytes announced never all arrive.
      expect(got).toContain("0123456789");
      expect(got).not.toContain("\r\n0\r\n\r\n");
      expect(ms).toBeGreaterThan(300);
      // A written exception: on Bun.serve the listener's idle timeout (1 s here, applied in steps of
      // about 4 s) bounds the stall, not the read gap.
      expect(ms).toBeLessThan(front === "raw" ? 3000 : 10_000);
      for (let i = 0; i < 100 && closedUpstreams === before; i++) await Bun.sleep(20);
      expect(closedUpstreams).toBeGreaterThan(before);
    });
  }
});
