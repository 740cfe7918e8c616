import { describe, expect, test } from "bun:test";
import { findHeadEnd, parseRequestHead, type RequestHead } from "./http1/request-head.ts";
import { FrameBoundaries, isPipedUpgrade, withUpgrade } from "./websocket-pipe.ts";

function head(text: string): RequestHead {
  const buf = Buffer.from(text, "latin1");
  const h = parseRequestHead(buf, 0, findHeadEnd(buf, 0, buf.length));
  if (typeof h === "number") throw new Error(`refused with ${h}`);
  return h;
}

const HANDSHAKE = "Host: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: abc=\r\n";

describe("isPipedUpgrade", () => {
  test("a WebSocket handshake: GET, websocket, a key, version 13", () => {
    expect(isPipedUpgrade(head(`GET / HTTP/1.1\r\n${HANDSHAKE}Sec-WebSocket-Version: 13\r\n\r\n`))).toBe(
      true,
    );
  });
  test("anything else goes to the app", () => {
    expect(isPipedUpgrade(head(`POST / HTTP/1.1\r\n${HANDSHAKE}Sec-WebSocket-Version: 13\r\n\r\n`))).toBe(
      false,
    );
    expect(isPipedUpgrade(head(`GET / HTTP/1.1\r\n${HANDSHAKE}Sec-WebSocket-Version: 8\r\n\r\n`))).toBe(
      false,
    );
    const withBody = `GET / HTTP/1.1\r\n${HANDSHAKE}Sec-WebSocket-Version: 13\r\nContent-Length: 1\r\n\r\n`;
    expect(isPipedUpgrade(head(withBody))).toBe(false);
    expect(isPipedUpgrade(head(`GET / HTTP/1.0\r\n${HANDSHAKE}Sec-WebSocket-Version: 13\r\n\r\n`))).toBe(
      false,
    );
    expect(
      isPipedUpgrade(head("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")),
    ).toBe(false);
    expect(
      isPipedUpgrade(head("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n")),
    ).toBe(false);
  });
});

describe("withUpgrade", () => {
  test("the upgrade fields go before the blank line, whatever the head's form", () => {
    const text = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    const want = "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    expect(withUpgrade({ head: text, requestId: "" }).head).toBe(want);
    const bytes = withUpgrade({ head: Buffer.from(text), requestId: "r" });
    expect(Buffer.from(bytes.head as Uint8Array).toString("latin1")).toBe(want);
    expect(bytes.requestId).toBe("r");
  });
});

/** A frame header for `len` payload bytes, masked or not. */
function frameHeader(len: number, masked: boolean): Buffer {
  const m = masked ? 0x80 : 0;
  const key = masked ? [1, 2, 3, 4] : [];
  if (len < 126) return Buffer.from([0x82, m | len, ...key]);
  if (len < 65536) return Buffer.from([0x82, m | 126, len >> 8, len & 0xff, ...key]);
  const h = Buffer.alloc(10);
  h[0] = 0x82;
  h[1] = m | 127;
  h.writeBigUInt64BE(BigInt(len), 2);
  return Buffer.concat([h, Buffer.from(key)]);
}

describe("FrameBoundaries", () => {
  const sizes = [0, 5, 125, 126, 300, 65535, 65536, 70000];
  for (const masked of [false, true]) {
    test(`finds every boundary, fed a byte at a time or whole (${masked ? "masked" : "unmasked"})`, () => {
      const parts = sizes.map((n) => Buffer.concat([frameHeader(n, masked), Buffer.alloc(n, 1)]));
      const stream = Buffer.concat(parts);
      const boundaries = new Set<number>();
      let at = 0;
      for (const p of parts) {
        at += p.length;
        boundaries.add(at);
      }
      // Whole: one pass follows it all and ends between frames.
      const whole = new FrameBoundaries();
      expect(whole.feed(stream, 0, stream.length, false)).toBe(-1);
      expect(whole.atBoundary).toBe(true);
      // In small pieces: at every offset, atBoundary says whether a frame just ended.
      const f = new FrameBoundaries();
      for (let i = 0; i < stream.length; i += 7) {
        f.feed(stream, i, Math.min(i + 7, stream.length), false);
        const end = Math.min(i + 7, stream.length);
        expect(f.atBoundary).toBe(boundaries.has(end));
      }
    });
  }

  test("with stop: the first boundary in the range, or -1 when there is none", () => {
    const a = Buffer.concat([frameHeader(300, false), Buffer.alloc(300)]);
    const b = Buffer.concat([frameHeader(10, false), Buffer.alloc(10)]);
    const stream = Buffer.concat([a, b]);
    const f = new FrameBoundaries();
    f.feed(stream, 0, 100, false);
    expect(f.feed(stream, 100, 200, true)).toBe(-1);
    expect(f.feed(stream, 200, stream.length, true)).toBe(a.length);
    // At a boundary already: here.
    expect(f.feed(stream, a.length, stream.length, true)).toBe(a.length);
    // A range that ends exactly where a frame ends: its end.
    const g = new FrameBoundaries();
    expect(g.feed(a, 0, a.length, true)).toBe(0);
    g.feed(a, 0, 3, false);
    expect(g.feed(a, 3, a.length, true)).toBe(a.length);
  });
});
