import { expect, test } from "bun:test";
import type { Http2ServerRequest } from "node:http2";
import { toRequest } from "../../proxy/h2/bridge.ts";
import { parseRequestHead } from "../../proxy/raw-front/http1/request-head.ts";
import { markProtocol } from "../../proxy/request/observer.ts";
import { HeadArrival, requestArrival } from "./arrived-request.ts";

/** The same request as the raw front parses it and as Bun.serve hands it over. */
function both(headText: string, body = "") {
  const buf = Buffer.from(`${headText}${body}`, "latin1");
  const head = parseRequestHead(buf, 0, headText.length);
  if (typeof head === "number") throw new Error(`head refused: ${head}`);
  const headers = new Headers();
  for (let i = 0; i < head.fieldCount; i++) headers.append(head.rawName(i), head.value(i));
  const req = new Request(`http://x${head.target}`, {
    method: head.method,
    headers,
    // Bytes, not a string: a string body would add a Content-Type the client never sent.
    ...(body === "" ? {} : { body: new TextEncoder().encode(body) }),
  });
  return {
    raw: new HeadArrival(head),
    bun: requestArrival(req, ["user-agent", "referer", "x-two"], true),
    req,
  };
}

test("both fronts read the same target, protocol, length and fields of one request", () => {
  const headText =
    "POST /a/b?x=1&y=%20 HTTP/1.1\r\nHost: app.test\r\nUser-Agent:   curl/8.1  \r\n" +
    "Content-Length: 5\r\nX-Two: a\r\nX-Two: b\r\n\r\n";
  const { raw, bun } = both(headText, "hello");
  expect(raw.target).toBe("/a/b?x=1&y=%20");
  expect(bun.target).toBe(raw.target);
  expect([raw.protocol, bun.protocol]).toEqual(["HTTP/1.1", "HTTP/1.1"]);
  for (const f of ["user-agent", "referer", "x-two"]) expect(bun.header(f)).toBe(raw.header(f));
  expect(raw.header("x-two")).toBe("a, b");
  expect(raw.header("referer")).toBeNull();
  // The head as sent is 113 bytes (+5 body); the whitespace around a value is not counted, and the two
  // X-Two lines count as one on Bun.serve, which joins them: a written difference (docs/observability.md).
  expect(headText.length).toBe(113);
  expect(raw.length).toBe(113 - 4 + 5);
  expect(bun.length).toBe(raw.length - "x-two: a\r\n".length + ", b".length);
});

test("a Content-Length body counts, and HTTP/1.0 is read from the head or from the mark a relay left", () => {
  const { raw, bun, req } = both("GET / HTTP/1.0\r\nHost: a\r\n\r\n");
  expect(raw.protocol).toBe("HTTP/1.0");
  expect(bun.protocol).toBe("HTTP/1.1");
  markProtocol(req, "HTTP/1.0");
  expect(requestArrival(req, [], false).protocol).toBe("HTTP/1.0");
  expect(raw.length).toBe("GET / HTTP/1.0\r\nHost: a\r\n\r\n".length);
  expect(requestArrival(req, [], false).length).toBe(0);
});

test("a request made from node:http2 is marked with its version", () => {
  const compat = { url: "/x?y", headers: { ":path": "/x?y", host: "a" }, method: "GET", httpVersion: "2.0" };
  const req = toRequest(compat as unknown as Http2ServerRequest, "a", new AbortController().signal, "http");
  expect(req === undefined ? "" : requestArrival(req, [], false).protocol).toBe("HTTP/2.0");
});
