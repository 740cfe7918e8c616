import { describe, expect, test } from "bun:test";
import { DROP } from "./head-to-upstream.ts";
import { knownName, methodAt, nameHashOf } from "./interned.ts";

/** The lower-case name the table gives (undefined: not a common name), read inside other bytes. */
function viaTable(text: string): string | undefined {
  const buf = Buffer.from(`xx${text}:yy`, "latin1");
  return knownName(buf, 2, 2 + text.length, nameHashOf(buf, 2, 2 + text.length));
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
  const unknown = new Set(["hosu", "hos", "hostt", "x-custom", "x-amz-date", "content-lengtg", "a"]);
  test("a common name in any case gives its lower-case form; anything else none", () => {
    for (const n of names)
      expect(viaTable(n)).toBe(unknown.has(n.toLowerCase()) ? undefined : n.toLowerCase());
    for (let seed = 0; seed < 64; seed++)
      for (const n of ["content-length", "if-modified-since", "x-forwarded-for", "upgrade-insecure-requests"])
        expect(viaTable(mixed(n, seed))).toBe(n);
  });

  test("every name the parser or the upstream head acts on is known, in every case", () => {
    const acted = [...DROP, "host"];
    for (const n of acted) {
      expect(viaTable(n)).toBe(n);
      expect(viaTable(n.toUpperCase())).toBe(n);
      expect(viaTable(mixed(n, 0x5a5a))).toBe(n);
    }
  });

  test("methods: known ones interned, case kept, others decoded", () => {
    for (const m of ["GET", "POST", "DELETE", "OPTIONS", "get", "Get", "GETX", "PROPFIND", "M", "PATCh"]) {
      const buf = Buffer.from(` ${m} /`, "latin1");
      expect(methodAt(buf, 1, 1 + m.length)).toBe(m);
    }
  });
});
