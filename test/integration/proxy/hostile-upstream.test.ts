/**
 * Upstreams that misbehave, on both fronts: a response head larger than the gateway takes (64 KB, as the
 * raw front's parser and, measured on Bun's path, the full request path) is a 502, never relayed; one
 * within the limit is served. The backend is a raw socket, so it can send what no HTTP library would.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
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
let restoreSink: ((line: string) => void) | undefined;

/** Answers `/head/N` with a response whose one extra field is N bytes long. */
function answer(s: Socket<undefined>, chunk: Buffer): void {
  const m = /^GET \/head\/(\d+) /.exec(chunk.toString("latin1"));
  const size = Number(m?.[1] ?? 0);
  s.write(
    `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(size)}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`,
  );
  s.end();
}

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  upstream = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data: answer } });
});

afterAll(() => {
  upstream.stop(true);
  if (restoreSink) setLogSink(restoreSink);
});

forEachFront("hostile upstreams", (front) => {
  let gw: GatewayServer;
  let port: number;

  beforeAll(async () => {
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [listener([vhost("up.example", [route("all", match("/"), forwardTo("up"))])])],
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
});
