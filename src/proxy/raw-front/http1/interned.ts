/**
 * Strings the request parser would otherwise make for every request: the method and the common header
 * names. Their bytes are compared with a table and the table's string is returned, so a request whose
 * names are all common costs no `toString` or `toLowerCase` call for them (each a native call: 70–90 ns
 * here, several per request, against a few ns of byte compares). Anything not in the tables is decoded
 * only when asked for, to the same string.
 */

import { nameIs } from "./chars.ts";

const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE"];

/**
 * Common request header names (browsers, curl, HTTP libraries), and every name the fast path acts on:
 * framing, hop-by-hop, the X-Forwarded-* and X-Request-Id fields it replaces, and its relay header.
 */
const NAMES = [
  "Host",
  "User-Agent",
  "Accept",
  "Accept-Encoding",
  "Accept-Language",
  "Accept-Charset",
  "Authorization",
  "Cache-Control",
  "Connection",
  "Content-Length",
  "Content-Type",
  "Content-Encoding",
  "Cookie",
  "DNT",
  "Expect",
  "Forwarded",
  "If-Match",
  "If-Modified-Since",
  "If-None-Match",
  "If-Range",
  "If-Unmodified-Since",
  "Keep-Alive",
  "Origin",
  "Pragma",
  "Priority",
  "Proxy-Connection",
  "Range",
  "Referer",
  "Sec-Ch-Ua",
  "Sec-Ch-Ua-Mobile",
  "Sec-Ch-Ua-Platform",
  "Sec-Fetch-Dest",
  "Sec-Fetch-Mode",
  "Sec-Fetch-Site",
  "Sec-Fetch-User",
  "Sec-WebSocket-Key",
  "Sec-WebSocket-Version",
  "Sec-WebSocket-Extensions",
  "Sec-WebSocket-Protocol",
  "TE",
  "Trailer",
  "Transfer-Encoding",
  "Upgrade",
  "Upgrade-Insecure-Requests",
  "Via",
  "X-Forwarded-For",
  "X-Forwarded-Host",
  "X-Forwarded-Port",
  "X-Forwarded-Proto",
  "X-Real-IP",
  "X-Request-Id",
  "X-Requested-With",
  "X-Gatehouse-Relayed-Client",
];

/**
 * A case-folded FNV-1a hash of a name, computed by the parser while it checks the name's bytes: OR-ing
 * 0x20 lower-cases letters and leaves the other token characters as they are (`^` and `~` fold
 * together, which the confirming compare settles).
 */
export const NAME_HASH_BASIS = 0x811c9dc5 | 0;
export function nameHashStep(h: number, c: number): number {
  return Math.imul(h ^ (c | 0x20), 0x01000193);
}

/** The hash knownName takes, for `buf[from, to)` (the parser computes it on the way instead). */
export function nameHashOf(buf: Uint8Array, from: number, to: number): number {
  let h = NAME_HASH_BASIS;
  for (let i = from; i < to; i++) h = nameHashStep(h, buf[i] as number);
  return h;
}

/** By hash; a list, so that two names whose hashes collide would both be found. */
const BY_HASH = new Map<number, string[]>();
for (const usual of NAMES) {
  const lower = usual.toLowerCase();
  const h = nameHashOf(Buffer.from(lower, "latin1"), 0, lower.length);
  BY_HASH.set(h, [...(BY_HASH.get(h) ?? []), lower]);
}
const METHODS_BY_LENGTH: string[][] = [];
for (const m of METHODS) {
  const list = METHODS_BY_LENGTH[m.length] ?? [];
  list.push(m);
  METHODS_BY_LENGTH[m.length] = list;
}

/** `buf[from, to)` equals `s` byte for byte. */
function same(buf: Uint8Array, from: number, to: number, s: string): boolean {
  for (let i = from; i < to; i++) if (buf[i] !== s.charCodeAt(i - from)) return false;
  return true;
}

/** The method `buf[from, to)` (a token, as the parser checked) as a string. */
export function methodAt(buf: Buffer, from: number, to: number): string {
  const list = METHODS_BY_LENGTH[to - from];
  if (list !== undefined) for (const m of list) if (same(buf, from, to, m)) return m;
  return buf.toString("latin1", from, to);
}

/**
 * The lower-case name of the header name `buf[from, to)` when it is a common one (compared ignoring
 * case, so every spelling of a name the parser acts on is recognised), else undefined: the caller then
 * decodes it only if something asks. `hash`: the name's nameHashStep hash, which the parser computes.
 */
export function knownName(buf: Uint8Array, from: number, to: number, hash: number): string | undefined {
  const list = BY_HASH.get(hash);
  if (list !== undefined) for (const lower of list) if (nameIs(buf, from, to, lower)) return lower;
  return undefined;
}
