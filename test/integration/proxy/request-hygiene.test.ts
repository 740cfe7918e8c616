/**
 * Findings of the differential run against nginx (issue 21), as the bytes that showed them, on both
 * fronts. Field names with `_`: dropped before routing, guards or forwarding see them, as nginx does
 * (`underscores_in_headers off`), counted for the operator, kept with `underscoresInHeaders`. Raw bytes
 * in the request target that are not UTF-8: refused on both fronts (Bun.serve would forward U+FFFD,
 * nginx the bytes as they are), so no two fronts send different paths for the same bytes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import type { RequestInfo, RequestObserver } from "../../../src/proxy/request/observer.ts";
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
import { parseResponse, type RawResponse, wireExchange } from "../../helpers/raw-http.ts";

/** `GET target` with the target's characters sent as single bytes (Latin-1), not as UTF-8. */
function getBytes(port: number, target: string): Promise<RawResponse> {
  const head = `GET ${target} HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(Buffer.from(head, "latin1")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(parseResponse(Buffer.concat(chunks))));
  });
}

/** `bytes` sent as they are; everything read until the server closes, as Latin-1. */
function wire(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port }, () => socket.write(bytes));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

/** Counts what the gateway reports about dropped fields; everything else is ignored. */
class DropCounter implements RequestObserver {
  dropped = 0;
  begin(): RequestInfo {
    return { started: 0, route: "", upstream: "", upstreamMs: -1, client: "" };
  }
  end(): void {}
  headerFieldsDropped(_listener: string, count: number): void {
    this.dropped += count;
  }
}

const say = (body: string) => ({ kind: "DirectResponse", status: 200, body }) as const;

/** A request that carries every field name nginx drops, beside the fields that frame it. */
const UNDERSCORED = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: app.example\r\nX_Forwarded_For: 6.6.6.6\r\nTransfer_Encoding: chunked\r\n` +
  "Content_Length: 5\r\nX_Route: yes\r\nX-Plain: kept\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

forEachFront("request hygiene (differential findings)", (front) => {
  let pub: TestUpstream;
  let restoreSink: ((line: string) => void) | undefined;
  const gateways: GatewayServer[] = [];
  const counters = { drop: new DropCounter(), keep: new DropCounter() };
  const ports = { drop: 0, keep: 0 };

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    pub = startUpstream("public");
    for (const kind of ["drop", "keep"] as const) {
      const gw = new GatewayServer({
        bind: "127.0.0.1",
        front,
        observer: counters[kind],
        underscoresInHeaders: kind === "keep",
      });
      await gw.apply(
        model(
          [
            listener([
              vhost("app.example", [
                route(
                  "by-underscored-field",
                  match("/public/h", "Prefix", {
                    headers: [{ type: "Exact", name: "x_route", value: "yes" }],
                  }),
                  say("matched by X_Route"),
                ),
                // A mirror makes the raw front relay the request to the listener's app (the slow path).
                route("relayed", match("/relayed"), forwardTo("public"), {
                  filters: [{ kind: "RequestMirror", backendId: "public", percent: 100 }],
                }),
                route("public", match("/"), forwardTo("public")),
              ]),
            ]),
          ],
          [backend("public", [pub.port])],
        ),
      );
      gateways.push(gw);
      ports[kind] = gw.ports()[0]?.port ?? 0;
    }
  });

  afterAll(async () => {
    for (const gw of gateways) await gw.stop(true);
    await pub.stop();
    if (restoreSink) setLogSink(restoreSink);
  });

  describe("field names with _", () => {
    for (const path of ["/public/x", "/relayed/x"]) {
      test(`are never forwarded, and never frame or spoof anything (${path})`, async () => {
        const before = counters.drop.dropped;
        const res = await wireExchange(ports.drop, UNDERSCORED(path));
        expect(res.status).toBe(200);
        const got = JSON.parse(res.body);
        expect(Object.keys(got.headers).filter((n) => n.includes("_"))).toEqual([]);
        expect([got.path, got.body, got.headers["x-plain"]]).toEqual([path, "hello", "kept"]);
        expect(got.headers["x-forwarded-for"]).not.toContain("6.6.6.6");
        // Counted once per field, on the raw front's relayed path too (its app sees none of them).
        expect(counters.drop.dropped - before).toBe(4);
      });
    }

    test("are dropped before routing: a header match on one never matches", async () => {
      const res = await wireExchange(ports.drop, UNDERSCORED("/public/h"));
      expect(JSON.parse(res.body).path).toBe("/public/h");
    });

    test("are kept, for routing and forwarding, with underscoresInHeaders", async () => {
      const matched = await wireExchange(ports.keep, UNDERSCORED("/public/h"));
      expect(matched.body).toBe("matched by X_Route");
      const res = await wireExchange(ports.keep, UNDERSCORED("/public/x"));
      const got = JSON.parse(res.body);
      expect([got.headers.x_route, got.headers.x_forwarded_for, got.body]).toEqual([
        "yes",
        "6.6.6.6",
        "hello",
      ]);
      expect(counters.keep.dropped).toBe(0);
    });
  });

  describe("HEAD", () => {
    test("the gateway's own answer to HEAD (404: no host matches) has no body", async () => {
      // Pipelined on one connection: a body after the HEAD answer would be read as the next response.
      const req = (method: string, close: string) =>
        `${method} /x HTTP/1.1\r\nHost: nowhere.example\r\n${close}\r\n`;
      const raw = await wire(ports.drop, req("HEAD", "") + req("GET", "Connection: close\r\n"));
      const firstEnd = raw.indexOf("\r\n\r\n") + 4;
      expect(raw.slice(0, 13)).toBe("HTTP/1.1 404 ");
      expect(raw.slice(firstEnd, firstEnd + 13)).toBe("HTTP/1.1 404 ");
      expect(raw.split("HTTP/1.1 ").length - 1).toBe(2);
    });
  });

  describe("raw bytes in the target", () => {
    // Each not UTF-8 (a lone byte, a cut sequence, a surrogate, an overlong `/`), or U+FFFD itself:
    // Bun.serve makes each of them U+FFFD, so neither front can forward the path the client sent.
    for (const bytes of [
      "\xff",
      "\x80",
      "\xe2\x82",
      "\xed\xa0\x80",
      "\xc0\xaf",
      "\xef\xbf\xbd",
      "%EF%bf%BD",
    ]) {
      for (const target of [`/public/${bytes}`, `/public/x?q=${bytes}`]) {
        test(`${JSON.stringify(target)} is refused with 400`, async () => {
          const before = pub.requests.length;
          const res = await getBytes(ports.drop, target);
          expect(res.status).toBe(400);
          expect(pub.requests.length).toBe(before);
        });
      }
    }

    test("UTF-8 is forwarded percent-encoded, the same on both fronts", async () => {
      const res = await getBytes(ports.drop, "/public/caf\xc3\xa9/\xf0\x9f\x98\x80?q=\xc3\xa9");
      expect(JSON.parse(res.body).path).toBe("/public/caf%C3%A9/%F0%9F%98%80?q=%C3%A9");
    });
  });
});
