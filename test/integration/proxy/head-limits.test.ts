/**
 * Request head limits (`--max-request-header-bytes`, `--max-request-header-count`), the same answer on
 * both fronts: a head past its size is 431, a request line past 8 KiB 414, more field lines than the
 * count 431. The written exception: Bun's Headers joins repeated fields of one name, so on `--front bun`
 * they count once (docs/http.md).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import http from "node:http";
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
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { wireExchange } from "../../helpers/raw-http.ts";

const LIMITS = { bytes: 16 * 1024, fields: 20 };

/** A GET whose head is exactly `size` bytes, padded by one field. */
function sized(path: string, size: number): string {
  const pre = `GET ${path} HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\nX-Pad: `;
  return `${pre}${"p".repeat(size - pre.length - 4)}\r\n\r\n`;
}

/** A GET with `n` field lines in all (Host and Connection included); `name(i)` names the others. */
function withFields(n: number, name: (i: number) => string): string {
  let fields = "";
  for (let i = 0; i < n - 2; i++) fields += `${name(i)}: v\r\n`;
  return `GET /direct HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n${fields}\r\n`;
}

forEachFront("request head limits", (front) => {
  let pub: TestUpstream;
  let gw: GatewayServer;
  let port = 0;
  let restoreSink: ReturnType<typeof setLogSink> | undefined;
  const bunLimit = http.maxHeaderSize;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    pub = startUpstream("public");
    gw = new GatewayServer({ bind: "127.0.0.1", front, requestHeadLimits: LIMITS });
    await gw.apply(
      model(
        [
          listener([
            vhost("app.example", [
              route("direct", match("/direct"), { kind: "DirectResponse", status: 200, body: "ok" }),
              route("public", match("/"), forwardTo("public")),
            ]),
          ]),
        ],
        [backend("public", [pub.port])],
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop(true);
    await pub.stop();
    (http as { maxHeaderSize: number }).maxHeaderSize = bunLimit;
    if (restoreSink) setLogSink(restoreSink);
  });

  test("a head within the size is served, forwarded too; one past it is 431 and never forwarded", async () => {
    expect((await wireExchange(port, sized("/direct", 15_000))).status).toBe(200);
    const forwarded = await wireExchange(port, sized("/public/x", 15_000));
    expect([forwarded.status, JSON.parse(forwarded.body).headers["x-pad"]]).toEqual([
      200,
      sized("/public/x", 15_000).split("X-Pad: ")[1]?.trim(),
    ]);
    const before = pub.requests.length;
    const refused = await wireExchange(port, sized("/public/x", LIMITS.bytes + 1));
    // Bun.serve answers this one itself, with no body (docs/http.md).
    const body = front === "raw" ? "Request Header Fields Too Large\n" : "";
    expect([refused.status, refused.body]).toEqual([431, body]);
    expect((await wireExchange(port, sized("/public/x", 40_000))).status).toBe(431);
    expect(pub.requests.length).toBe(before);
  });

  test("a request line past 8 KiB is 414 within the head size", async () => {
    const line = (n: number) =>
      `GET /direct?q=${"a".repeat(n)} HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n`;
    expect((await wireExchange(port, line(8000))).status).toBe(200);
    const refused = await wireExchange(port, line(9000));
    expect([refused.status, refused.body]).toEqual([414, "URI Too Long\n"]);
  });

  test("as many field lines as the count are served; one more is 431", async () => {
    expect(
      (
        await wireExchange(
          port,
          withFields(LIMITS.fields, (i) => `X-${i}`),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await wireExchange(
          port,
          withFields(LIMITS.fields + 1, (i) => `X-${i}`),
        )
      ).status,
    ).toBe(431);
    expect(
      (
        await wireExchange(
          port,
          withFields(150, (i) => `X-${i}`),
        )
      ).status,
    ).toBe(431);
  });

  test("repeated fields of one name: each line counts on the raw front, once on --front bun (exception)", async () => {
    const res = await wireExchange(
      port,
      withFields(LIMITS.fields + 5, () => "X-Same"),
    );
    expect(res.status).toBe(front === "raw" ? 431 : 200);
  });
});
