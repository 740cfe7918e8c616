/**
 * passedOnHead without response filters copies kept field lines as bytes from the upstream's buffer.
 * Checked three ways: hand-written expectations for the cases that matter most (hop-by-hop fields,
 * fields Connection names, spacing, Server/Date, edits), the parsed fields themselves, and a
 * differential run over a corpus of heads × options against the string algorithm it replaced (which
 * reads the lazily decoded names and values).
 */
import { describe, expect, test } from "bun:test";
import { HOP_BY_HOP } from "../../request/hop-by-hop.ts";
import { scratch } from "../outbox.ts";
import { generatedResponse, passedOnHead, type ResponseHeaderEdit } from "./head-to-client.ts";

/** passedOnHead's result as a Buffer of its own. */
function headBytes(head: Buffer | number): Buffer {
  return typeof head === "number" ? Buffer.from(scratch().subarray(0, head)) : head;
}

import { findHeadEnd } from "./request-head.ts";
import { parseResponseHead, RES_CHUNKED, type ResponseHead } from "./response-head.ts";

function parse(text: string, noBody = false): ResponseHead {
  const buf = Buffer.from(text, "latin1");
  const res = parseResponseHead(buf, 0, findHeadEnd(buf, 0, buf.length), noBody);
  if (res === undefined) throw new Error(`does not parse: ${JSON.stringify(text)}`);
  return res;
}

/** The head as text with the Date value blanked (it is the current second when we add it). */
function text(bytes: Uint8Array): string {
  return Buffer.from(bytes)
    .toString("latin1")
    .replace(/^(date): .*$/gim, "$1: <date>");
}

const plain = (res: ResponseHead, edit?: ResponseHeaderEdit, body?: Buffer) =>
  text(headBytes(passedOnHead(res, "gatehouse", false, false, false, [], edit, body)));

describe("parsed fields", () => {
  test("names, raw names and values (OWS trimmed), reason and framing", () => {
    const res = parse(
      "HTTP/1.1 200 Very OK\r\nContent-Type:text/plain\r\nX-Spaced: \t a b \t\r\nX-Empty:\r\nCONTENT-LENGTH: 5\r\n\r\nhello",
    );
    expect(res.status).toBe(200);
    expect(res.reason).toBe("Very OK");
    expect(res.rawNames).toEqual(["Content-Type", "X-Spaced", "X-Empty", "CONTENT-LENGTH"]);
    expect(res.names).toEqual(["content-type", "x-spaced", "x-empty", "content-length"]);
    expect(res.values).toEqual(["text/plain", "a b", "", "5"]);
    expect(res.contentLength).toBe(5);
    expect(res.reusable).toBe(true);
  });

  test("Content-Length lists and bad values keep the old rules", () => {
    expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n").contentLength).toBe(3);
    for (const bad of ["3, 4", "-1", "1x", ""]) {
      const buf = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${bad}\r\n\r\n`, "latin1");
      expect(parseResponseHead(buf, 0, findHeadEnd(buf, 0, buf.length), false)).toBeUndefined();
    }
  });

  test("a status line that is not exactly HTTP/1.x is refused", () => {
    for (const line of ["http/1.1 200 OK", "HTTP/2.0 200 OK", "HTTP/1.1 20 OK", "HTTPS1.1 200 OK"]) {
      const buf = Buffer.from(`${line}\r\nContent-Length: 0\r\n\r\n`, "latin1");
      expect(parseResponseHead(buf, 0, findHeadEnd(buf, 0, buf.length), false)).toBeUndefined();
    }
  });
});

describe("passedOnHead without filters", () => {
  test("this hop's fields go, the rest is copied as Name: value in order, Server and Date added", () => {
    const res = parse(
      "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Secret\r\nKeep-Alive: timeout=5\r\nX-Secret: s\r\n" +
        "Proxy-Connection: x\r\nTE: trailers\r\nTrailer: X-T\r\nUpgrade: h2c\r\nX-A:   1  \r\nContent-Length: 2\r\n\r\n",
    );
    expect(plain(res)).toBe(
      "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 2\r\nServer: gatehouse\r\nDate: <date>\r\n\r\n",
    );
  });

  test("Content-Length stays even when Connection names it", () => {
    const res = parse("HTTP/1.1 200 OK\r\nConnection: content-length\r\nContent-Length: 2\r\n\r\n");
    expect(plain(res)).toContain("Content-Length: 2\r\n");
  });

  test("the upstream's Server and Date are kept, not doubled; no reason gives 'SSS '", () => {
    const res = parse("HTTP/1.1 204\r\nserver: up\r\nDATE: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n");
    expect(text(headBytes(passedOnHead(res, "gatehouse", false, false, false, [])))).toBe(
      "HTTP/1.1 204 \r\nserver: up\r\nDATE: <date>\r\n\r\n",
    );
  });

  test("edits: appended fields added, set fields replace the upstream's of that name", () => {
    const res = parse("HTTP/1.1 200 OK\r\nRateLimit: upstream\r\nX-Keep: 1\r\nContent-Length: 0\r\n\r\n");
    const edit: ResponseHeaderEdit = { append: [["x-user", "alice"]], set: [["ratelimit", "ours"]] };
    expect(plain(res, edit)).toBe(
      "HTTP/1.1 200 OK\r\nX-Keep: 1\r\nContent-Length: 0\r\nServer: gatehouse\r\nDate: <date>\r\n" +
        "x-user: alice\r\nratelimit: ours\r\n\r\n",
    );
  });

  test("built in the scratch buffer when it fits, in a Buffer of its own when not; the same bytes", () => {
    const res = parse("HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n");
    const body = Buffer.alloc(200_000, 97);
    const small = passedOnHead(res, "g", false, false, false, [], undefined, body, 0, 1000);
    const large = passedOnHead(res, "g", false, false, false, [], undefined, body, 0, 200_000);
    expect(typeof small).toBe("number");
    expect(Buffer.isBuffer(large)).toBe(true);
    const head = (b: Buffer) => b.toString("latin1", 0, b.indexOf("\r\n\r\n") + 4);
    const smallBytes = headBytes(small);
    expect(head(smallBytes)).toBe(head(large as Buffer));
    expect(smallBytes.length - head(smallBytes).length).toBe(1000);
    expect((large as Buffer).length - head(large as Buffer).length).toBe(200_000);
  });

  test("the first body bytes follow the head in the same buffer; bytes above 0x7f pass unchanged", () => {
    const res = parse("HTTP/1.1 200 OK\r\nX-Latin: caf\u00e9\r\nContent-Length: 2\r\n\r\n");
    const out = headBytes(passedOnHead(res, "g", false, false, false, [], undefined, Buffer.from("hi")));
    const s = Buffer.from(out).toString("latin1");
    expect(s.endsWith("\r\n\r\nhi")).toBe(true);
    expect(out[s.indexOf("caf") + 3]).toBe(0xe9);
  });

  test("a range of the upstream's buffer is copied after the head, short and long, filtered or not", () => {
    const res = parse("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    const long = "x".repeat(100);
    const buf = Buffer.from(`HEAD-BYTES${long}TRAILING`);
    for (const filters of [[], [() => undefined]]) {
      const whole = Buffer.from(
        headBytes(passedOnHead(res, "g", false, false, false, filters, undefined, buf, 10, 110)),
      );
      expect(whole.toString("latin1").endsWith(`\r\n\r\n${long}`)).toBe(true);
      const short = Buffer.from(
        headBytes(passedOnHead(res, "g", false, false, false, filters, undefined, buf, 10, 12)),
      );
      expect(short.toString("latin1").endsWith("\r\n\r\nxx")).toBe(true);
    }
  });
});

/** The string algorithm the byte path replaced, on the parsed fields: the oracle. */
function reference(
  res: ResponseHead,
  serverHeader: string,
  chunkedOut: boolean,
  close: boolean,
  http10Client: boolean,
  edit: ResponseHeaderEdit | undefined,
  body: Uint8Array | undefined,
): string {
  const hop = new Set(HOP_BY_HOP);
  const { rawNames, names, values } = res;
  let out = `HTTP/1.1 ${res.status} ${res.reason}\r\n`;
  const named = res.connection;
  let server = false;
  let date = false;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (hop.has(name) || edit?.set.some(([n]) => n === name)) continue;
    if (named.length > 0 && name !== "content-length" && named.includes(name)) continue;
    if (name === "server") server = true;
    else if (name === "date") date = true;
    out += `${rawNames[i]}: ${values[i]}\r\n`;
  }
  if (!server) out += `Server: ${serverHeader}\r\n`;
  if (!date) out += "Date: <date>\r\n";
  for (const [n, v] of edit?.append ?? []) out += `${n}: ${v}\r\n`;
  for (const [n, v] of edit?.set ?? []) out += `${n}: ${v}\r\n`;
  if (chunkedOut && res.bodyKind === RES_CHUNKED) out += "Transfer-Encoding: chunked\r\n";
  if (close) out += "Connection: close\r\n";
  else if (http10Client) out += "Connection: keep-alive\r\n";
  const whole = `${out}\r\n${body === undefined ? "" : Buffer.from(body).toString("latin1")}`;
  return whole.replace(/^(date): .*$/gim, "$1: <date>");
}

test("differential: byte path = string algorithm over heads × options", () => {
  const heads = [
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain;charset=utf-8\r\nDate: x\r\nContent-Length: 3\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n",
    "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n",
    "HTTP/1.1 302 Found\r\nLocation: /x\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200\r\nConnection: X-Drop, close\r\nX-Drop: 1\r\nx-drop: 2\r\nX-Keep: 3\r\n\r\n",
    "HTTP/1.1 404 Not Found\r\nSERVER: s\r\nratelimit: up\r\nRateLimit-Policy: up\r\nContent-Length: 9\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-Ows:\t \tv v\t \r\nX-E:\r\nKeep-Alive: 1\r\nUpgrade: x\r\nTE: y\r\nContent-Length: 0\r\n\r\n",
    `HTTP/1.1 200 OK\r\nX-Long: ${"v".repeat(300)}\r\n${"X-Many: m\r\n".repeat(40)}Content-Length: 0\r\n\r\n`,
  ];
  const edits: (ResponseHeaderEdit | undefined)[] = [
    undefined,
    { append: [["x-user", "u"]], set: [] },
    {
      append: [],
      set: [
        ["ratelimit", "r"],
        ["ratelimit-policy", "p"],
      ],
    },
  ];
  let compared = 0;
  for (const h of heads) {
    const res = parse(h);
    for (const edit of edits)
      for (const chunkedOut of [false, true])
        for (const close of [false, true])
          for (const http10Client of [false, true])
            for (const body of [undefined, Buffer.from("body")]) {
              const got = text(
                headBytes(passedOnHead(res, "gh", chunkedOut, close, http10Client, [], edit, body)),
              );
              expect(got).toBe(reference(res, "gh", chunkedOut, close, http10Client, edit, body));
              compared++;
            }
  }
  expect(compared).toBe(heads.length * edits.length * 16);
});

test("the gateway's own answers carry their reason phrase (a guard's 401, 403, 429; 413; 421)", () => {
  for (const [status, reason] of [
    [401, "Unauthorized"],
    [403, "Forbidden"],
    [413, "Payload Too Large"],
    [421, "Misdirected Request"],
    [429, "Too Many Requests"],
  ] as const) {
    const head = Buffer.from(generatedResponse(status, "gatehouse", false)).toString("latin1");
    expect(head.slice(0, head.indexOf("\r\n"))).toBe(`HTTP/1.1 ${status} ${reason}`);
  }
});
