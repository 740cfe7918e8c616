import { describe, expect, test } from "bun:test";
import { DEFAULT_REQUEST_HEAD_LIMITS, MAX_REQUEST_HEADER_FIELDS } from "../../../model/http-syntax.ts";
import {
  BODY_CHUNKED,
  BODY_LENGTH,
  BODY_NONE,
  findHeadEnd,
  parseContentLength,
  parseRequestHead,
  type RequestHead,
} from "./request-head.ts";

const MAX_HEADERS = DEFAULT_REQUEST_HEAD_LIMITS.fields;

/** Parses `text` as one complete head (it must end with the blank line). */
function parse(text: string): RequestHead | number {
  const buf = Buffer.from(text, "latin1");
  const end = findHeadEnd(buf, 0, buf.length);
  if (end < 0) throw new Error("head not complete");
  return parseRequestHead(buf, 0, end);
}

function head(text: string): RequestHead {
  const h = parse(text);
  if (typeof h === "number") throw new Error(`refused with ${h}`);
  return h;
}

describe("findHeadEnd", () => {
  test("finds the blank line, across a resumed scan", () => {
    const buf = Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n\r\nNEXT");
    expect(findHeadEnd(buf, 0, buf.length)).toBe(buf.length - 4);
    expect(findHeadEnd(buf, 0, 20)).toBe(-1);
    expect(findHeadEnd(buf, 20, buf.length)).toBe(buf.length - 4);
  });

  test("a bare-LF ending counts as complete so that it is refused at once", () => {
    const buf = Buffer.from("GET / HTTP/1.1\nHost: a\n\n");
    expect(findHeadEnd(buf, 0, buf.length)).toBe(buf.length);
    expect(parseRequestHead(buf, 0, buf.length)).toBe(400);
  });
});

describe("parseRequestHead", () => {
  test("a plain GET: fields in order, names as sent and lower-cased, values trimmed", () => {
    const h = head("GET /a?b=1 HTTP/1.1\r\nHost: x.example\r\nX-Thing:  v \r\n\r\n");
    expect(h.method).toBe("GET");
    expect(h.target).toBe("/a?b=1");
    expect(h.http10).toBe(false);
    expect(h.rawNames).toEqual(["Host", "X-Thing"]);
    expect(h.names).toEqual(["host", "x-thing"]);
    expect(h.values).toEqual(["x.example", "v"]);
    expect(h.host).toBe("x.example");
    expect(h.bodyKind).toBe(BODY_NONE);
    expect(h.keepAlive).toBe(true);
  });

  test("Content-Length and chunked bodies", () => {
    const cl = head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n");
    expect([cl.bodyKind, cl.contentLength]).toEqual([BODY_LENGTH, 12]);
    const zero = head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
    expect(zero.bodyKind).toBe(BODY_NONE);
    const te = head("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n");
    expect(te.bodyKind).toBe(BODY_CHUNKED);
    const equal = head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\n");
    expect([equal.bodyKind, equal.contentLength]).toEqual([BODY_LENGTH, 5]);
  });

  describe("smuggling vectors are refused", () => {
    const cases: [string, string, number][] = [
      ["Content-Length with Transfer-Encoding", "Content-Length: 5\r\nTransfer-Encoding: chunked", 400],
      ["Transfer-Encoding with Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 5", 400],
      ["differing Content-Length fields", "Content-Length: 5\r\nContent-Length: 6", 400],
      ["differing Content-Length list", "Content-Length: 5, 6", 400],
      ["signed Content-Length", "Content-Length: +5", 400],
      ["hex Content-Length", "Content-Length: 0x5", 400],
      ["empty Content-Length", "Content-Length: ", 400],
      ["huge Content-Length", "Content-Length: 1234567890123456", 400],
      ["obs-fold", "X-A: one\r\n two", 400],
      ["space before the colon", "Content-Length : 5", 400],
      ["tab before the colon", "Transfer-Encoding\t: chunked", 400],
      ["a control character in a value", "X-A: a\u0001b", 400],
      ["a bare CR in a value", "X-A: a\rb", 400],
      ["NUL in a value", "X-A: a\u0000b", 400],
      ["chunked not last", "Transfer-Encoding: chunked, gzip", 400],
      ["chunked twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", 501],
      ["an unknown coding then chunked", "Transfer-Encoding: gzip, chunked", 501],
      ["a non-token coding", 'Transfer-Encoding: "chunked"', 400],
      ["a header name with a space", "X A: b", 400],
      ["a header line without a colon", "Garbage", 400],
    ];
    for (const [name, fields, status] of cases) {
      test(`${name} → ${status}`, () => {
        expect(parse(`POST / HTTP/1.1\r\nHost: a\r\n${fields}\r\n\r\n`)).toBe(status);
      });
    }

    test("Transfer-Encoding on HTTP/1.0 → 400", () => {
      expect(parse("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n")).toBe(400);
    });
  });

  test("request lines: bad method, target, version", () => {
    expect(parse("G(T / HTTP/1.1\r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse("GET  / HTTP/1.1\r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse("GET /\u007f HTTP/1.1\r\nHost: a\r\n\r\n")).toBe(400);
    expect(head("GET /caf\u00c3\u00a9 HTTP/1.1\r\nHost: a\r\n\r\n").target).toBe("/caf\u00c3\u00a9");
    expect(parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n")).toBe(505);
    expect(parse("GET / HTTP/0.9\r\nHost: a\r\n\r\n")).toBe(505);
    // RFC 9110 §2.5: a higher minor version of HTTP/1 is served as HTTP/1.1.
    for (const v of ["1.2", "1.9"]) expect(head(`GET / HTTP/${v}\r\nHost: a\r\n\r\n`).http10).toBe(false);
    expect(parse("GET / HTTP/1.10\r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse("GET / HTTP/1.1 \r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse("GET / HTTX/1.1\r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse("GET /\r\nHost: a\r\n\r\n")).toBe(400);
    expect(parse(`GET /${"a".repeat(9000)} HTTP/1.1\r\nHost: a\r\n\r\n`)).toBe(414);
  });

  test("Host: required on 1.1, optional on 1.0; repeated ones are joined (they then match no host)", () => {
    expect(parse("GET / HTTP/1.1\r\nX: y\r\n\r\n")).toBe(400);
    expect(head("GET / HTTP/1.0\r\n\r\n").host).toBe(null);
    expect(head("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").host).toBe("a, b");
  });

  test("methods are case-sensitive: lower case is refused, extension methods pass", () => {
    for (const m of ["get", "Get", "pOST"]) expect(parse(`${m} / HTTP/1.1\r\nHost: a\r\n\r\n`)).toBe(400);
    expect(head("PURGE / HTTP/1.1\r\nHost: a\r\n\r\n").method).toBe("PURGE");
  });

  test("absolute-form: the target's authority is the host (RFC 9112 §3.2.2), the target its origin-form", () => {
    const h = head("GET http://Other.local:8080/x?y=1 HTTP/1.1\r\nHost: probe.local\r\n\r\n");
    expect([h.host, h.target, h.hostFromTarget, h.hostFields]).toEqual([
      "Other.local:8080",
      "/x?y=1",
      true,
      1,
    ]);
    expect(head("GET https://a.example HTTP/1.1\r\nHost: a\r\n\r\n").target).toBe("/");
    expect(head("GET http://a.example?q HTTP/1.1\r\nHost: a\r\n\r\n").target).toBe("/?q");
    expect(head("GET http://[::1]:80/ HTTP/1.1\r\nHost: a\r\n\r\n").host).toBe("[::1]:80");
    expect(head("GET /x HTTP/1.1\r\nHost: a\r\n\r\n").hostFromTarget).toBe(false);
    // Userinfo, an empty or malformed authority: two parsers could read it differently.
    for (const t of ["http://user@evil/x", "http:///x", "http://a b/", "http://a:b:c/", "http://a%2f/"])
      expect([t, parse(`GET ${t} HTTP/1.1\r\nHost: a\r\n\r\n`)]).toEqual([t, 400]);
    // Host is still required on HTTP/1.1, as RFC 9112 §3.2 says.
    expect(parse("GET http://a.example/ HTTP/1.1\r\n\r\n")).toBe(400);
  });

  test("limits: too many fields → 431", () => {
    let fields = "";
    for (let i = 0; i < MAX_HEADERS; i++) fields += `X-${i}: v\r\n`;
    expect(typeof parse(`GET / HTTP/1.1\r\nHost: a\r\n${fields}\r\n`)).toBe("number");
    expect(parse(`GET / HTTP/1.1\r\nHost: a\r\n${fields}\r\n`)).toBe(431);
    expect(typeof parse(`GET / HTTP/1.0\r\n${fields}\r\n`)).toBe("object");
    expect(parse(`GET / HTTP/1.1\r\nHost: a\r\nX: ${"v".repeat(70_000)}\r\n\r\n`)).toBe(431);
  });

  test("limits given: a head of exactly `bytes` passes, one byte more is 431; `fields` lines pass, one more is 431", () => {
    const limits = { bytes: 4096, fields: 5 };
    const at = (text: string) => {
      const buf = Buffer.from(text, "latin1");
      return parseRequestHead(buf, 0, buf.length, false, limits);
    };
    const pre = "GET / HTTP/1.1\r\nHost: a\r\nX: ";
    const sized = (n: number) => `${pre}${"v".repeat(n - pre.length - 4)}\r\n\r\n`;
    expect(typeof at(sized(4096))).toBe("object");
    expect(at(sized(4097))).toBe(431);
    const lines = (n: number) => `GET / HTTP/1.1\r\nHost: a\r\n${"X: v\r\n".repeat(n - 1)}\r\n`;
    expect(typeof at(lines(5))).toBe("object");
    // Repeated names count line by line here (Bun's Headers joins them: docs/http.md).
    expect(at(lines(6))).toBe(431);
    // A request line past 8 KiB is 414 while the head is within its limit; past both, 431 first.
    const longLine = `GET /${"a".repeat(8200)} HTTP/1.1\r\nHost: a\r\n\r\n`;
    expect(at(longLine)).toBe(431);
    const buf = Buffer.from(longLine, "latin1");
    expect(parseRequestHead(buf, 0, buf.length, false, { bytes: 16384, fields: 5 })).toBe(414);
    // The working arrays hold the most fields a limit may allow.
    const most = { bytes: 64 * 1024, fields: MAX_REQUEST_HEADER_FIELDS };
    const b2 = Buffer.from(lines(MAX_REQUEST_HEADER_FIELDS), "latin1");
    expect((parseRequestHead(b2, 0, b2.length, false, most) as RequestHead).fieldCount).toBe(
      MAX_REQUEST_HEADER_FIELDS,
    );
  });

  test("a field whose name has a _ is dropped, unless asked to keep it; its line is still checked", () => {
    const text =
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer_Encoding: chunked\r\nX-A: 1\r\nContent_Length: 5\r\n" +
      "X_Forwarded_For: 6.6.6.6\r\nx_host: b\r\n\r\n";
    const h = head(text);
    expect([h.names, h.values, h.fieldCount]).toEqual([["host", "x-a"], ["a", "1"], 2]);
    expect(h.dropped).toEqual(["Transfer_Encoding", "Content_Length", "X_Forwarded_For", "x_host"]);
    expect([h.bodyKind, h.sentLength, h.host]).toEqual([BODY_NONE, false, "a"]);
    const buf = Buffer.from(text, "latin1");
    const kept = parseRequestHead(buf, 0, buf.length, true) as RequestHead;
    expect([kept.names.length, kept.dropped]).toEqual([6, []]);
    expect(head("GET / HTTP/1.1\r\nHost: a\r\n\r\n").dropped).toEqual([]);
    expect(parse("GET / HTTP/1.1\r\nHost: a\r\nX_A: a\u0001b\r\n\r\n")).toBe(400);
    expect(parse("GET / HTTP/1.1\r\nHost: a\r\nX_A : b\r\n\r\n")).toBe(400);
    // Dropped fields count towards the limit, as any other.
    let fields = "";
    for (let i = 0; i < MAX_HEADERS; i++) fields += `X_${i}: v\r\n`;
    expect(parse(`GET / HTTP/1.1\r\nHost: a\r\n${fields}\r\n`)).toBe(431);
  });

  test("keep-alive, Connection tokens, upgrade and Expect", () => {
    expect(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").keepAlive).toBe(false);
    expect(head("GET / HTTP/1.0\r\n\r\n").keepAlive).toBe(false);
    expect(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive).toBe(true);
    const up = head(
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n",
    );
    expect(up.connection).toEqual(["keep-alive", "upgrade"]);
    expect(up.upgrade).toBe("websocket");
    expect(head("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n").upgrade).toBe(null);
    const ex = head("PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n");
    expect(ex.expectContinue).toBe(true);
  });
});

test("parseContentLength", () => {
  expect(parseContentLength("0")).toBe(0);
  expect(parseContentLength("007")).toBe(7);
  expect(parseContentLength("3,3 , 3")).toBe(3);
  expect(parseContentLength("3,4")).toBe(-1);
  expect(parseContentLength("3,")).toBe(-1);
  expect(parseContentLength("-1")).toBe(-1);
  expect(parseContentLength("1e3")).toBe(-1);
});
