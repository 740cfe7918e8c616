import { describe, expect, test } from "bun:test";
import { ChunkedDecoder } from "./chunked.ts";

/** Feeds `text` split at every `step` bytes; returns [payload, end index or -1 / "more"]. */
function decode(text: string, step = Number.POSITIVE_INFINITY): [string, number | "more"] {
  const buf = Buffer.from(text, "latin1");
  const d = new ChunkedDecoder();
  let payload = "";
  for (let i = 0; i < buf.length; ) {
    const end = Math.min(buf.length, i + step);
    const at = d.feed(buf, i, end, (b, s, e) => {
      payload += b.toString("latin1", s, e);
    });
    if (at < 0) return [payload, -1];
    if (d.done) return [payload, at];
    i = end;
  }
  return [payload, "more"];
}

describe("ChunkedDecoder", () => {
  test("decodes, and says exactly where the body ends (the next request's bytes are not taken)", () => {
    const body = "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    expect(decode(`${body}GET / HTTP/1.1\r\n`)).toEqual(["hello world", body.length]);
  });

  test("the same result byte by byte", () => {
    const body = "5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n";
    expect(decode(`${body}NEXT`, 1)).toEqual(["hello0123456789", body.length]);
  });

  test("needs more bytes until the last chunk and the final CRLF", () => {
    expect(decode("5\r\nhello\r\n")[1]).toBe("more");
    expect(decode("5\r\nhello\r\n0\r\n")[1]).toBe("more");
    expect(decode("5\r\nhello\r\n0\r\n\r")[1]).toBe("more");
  });

  test("upper- and lower-case hex sizes", () => {
    expect(decode(`a\r\n${"x".repeat(10)}\r\nA\r\n${"y".repeat(10)}\r\n0\r\n\r\n`)[0]).toBe(
      "x".repeat(10) + "y".repeat(10),
    );
  });

  describe("bad framing is refused (the boundary would be a guess)", () => {
    const cases: [string, string][] = [
      ["no size", "\r\nabc\r\n0\r\n\r\n"],
      ["a non-hex size", "g\r\nabc\r\n0\r\n\r\n"],
      ["a signed size", "+3\r\nabc\r\n0\r\n\r\n"],
      ["a 0x prefix", "0x3\r\nabc\r\n0\r\n\r\n"],
      ["a size of 13 hex digits", "1000000000000\r\n"],
      ["a bare LF after the size", "3\nabc\r\n0\r\n\r\n"],
      ["a data chunk longer than its size", "3\r\nabcd\r\n0\r\n\r\n"],
      ["a data chunk shorter than its size", "5\r\nabc\r\n0\r\n\r\n"],
      ["a bare LF after the data", "3\r\nabc\n0\r\n\r\n"],
      ["a control character in an extension", "3;a=\u0001\r\nabc\r\n0\r\n\r\n"],
      ["an obs-fold trailer", "0\r\nX: a\r\n b\r\n\r\n"],
      ["a bare LF ending", "0\r\n\n"],
    ];
    for (const [name, text] of cases) {
      test(name, () => {
        expect(decode(text)[1]).toBe(-1);
      });
    }
  });

  test("extensions and trailers are bounded", () => {
    expect(decode(`3;${"e".repeat(20_000)}\r\nabc\r\n0\r\n\r\n`)[1]).toBe(-1);
    expect(decode(`0\r\nX: ${"v".repeat(20_000)}\r\n\r\n`)[1]).toBe(-1);
  });
});
