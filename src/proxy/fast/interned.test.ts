import { describe, expect, test } from "bun:test";
import { methodAt, nameAt } from "./interned.ts";

/** Decoded the plain way: what the parser made before the tables. */
function plain(text: string): { raw: string; lower: string } {
  const raw = Buffer.from(text, "latin1").toString("latin1");
  return { raw, lower: raw.toLowerCase() };
}

function viaTable(text: string): { raw: string; lower: string } {
  // Surrounded by other bytes, as in a real head.
  const buf = Buffer.from(`xx${text}:yy`, "latin1");
  const out = { raw: "", lower: "" };
  nameAt(buf, 2, 2 + text.length, out);
  return out;
}

/** Deterministic mixed case. */
function mixed(s: string, seed: number): string {
  let out = "";
  for (let i = 0; i < s.length; i++)
    out += (seed >> (i % 16)) & 1 ? s[i]?.toUpperCase() : s[i]?.toLowerCase();
  return out;
}

describe("interned names", () => {
  const names = [
    "Host",
    "user-agent",
    "ACCEPT-ENCODING",
    "X-Request-Id",
    "x-request-id",
    "X-REQUEST-ID",
    "Sec-WebSocket-Key",
    "sec-websocket-key",
    "TE",
    "te",
    "Te",
    "DNT",
    // Near misses and unknown names: same length as a known one, one byte off, or not in the tables.
    "Hosu",
    "Hos",
    "Hostt",
    "X-Custom",
    "x-amz-date",
    "Content-Lengtg",
    "A",
  ];
  test("raw spelling and lower-case name equal the plain decoding", () => {
    for (const n of names) expect(viaTable(n)).toEqual(plain(n));
    for (let seed = 0; seed < 64; seed++)
      for (const n of ["content-length", "if-modified-since", "x-forwarded-for", "upgrade-insecure-requests"])
        expect(viaTable(mixed(n, seed))).toEqual(plain(mixed(n, seed)));
  });

  test("methods: known ones interned, case kept, others decoded", () => {
    for (const m of ["GET", "POST", "DELETE", "OPTIONS", "get", "Get", "GETX", "PROPFIND", "M", "PATCh"]) {
      const buf = Buffer.from(` ${m} /`, "latin1");
      expect(methodAt(buf, 1, 1 + m.length)).toBe(m);
    }
  });
});
