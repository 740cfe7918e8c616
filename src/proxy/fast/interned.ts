/**
 * Strings the request parser would otherwise make for every request: the method and the common header
 * names. Their bytes are compared with a table and the table's string is returned, so a request whose
 * names are all common costs no `toString` or `toLowerCase` call for them (each a native call: 70–90 ns
 * here, several per request, against a few ns of byte compares). Anything not in the tables is decoded
 * as before, so the parse result is the same string either way.
 */

const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE"];

/** Lower-case names, with the spelling most clients send (browsers, curl, HTTP libraries). */
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
];

interface Known {
  readonly lower: string;
  /** The usual spelling, when it differs from `lower`. */
  readonly usual: string;
}

/** By length; few entries share one, so a lookup compares one to three names. */
const BY_LENGTH: Known[][] = [];
for (const usual of NAMES) {
  const list = BY_LENGTH[usual.length] ?? [];
  list.push({ lower: usual.toLowerCase(), usual });
  BY_LENGTH[usual.length] = list;
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

/** `buf[from, to)` equals `lower` ignoring ASCII case (`lower` is lower-case). */
function sameIgnoringCase(buf: Uint8Array, from: number, to: number, lower: string): boolean {
  for (let i = from; i < to; i++) {
    let c = buf[i] as number;
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(i - from)) return false;
  }
  return true;
}

/** The method `buf[from, to)` (a token, as the parser checked) as a string. */
export function methodAt(buf: Buffer, from: number, to: number): string {
  const list = METHODS_BY_LENGTH[to - from];
  if (list !== undefined) for (const m of list) if (same(buf, from, to, m)) return m;
  return buf.toString("latin1", from, to);
}

/**
 * The header name `buf[from, to)` as sent (`raw`) and lower-case (`lower`), written into `out` so that
 * the parser makes no object per field.
 */
export function nameAt(buf: Buffer, from: number, to: number, out: { raw: string; lower: string }): void {
  const list = BY_LENGTH[to - from];
  if (list !== undefined) {
    for (const k of list) {
      if (!sameIgnoringCase(buf, from, to, k.lower)) continue;
      out.lower = k.lower;
      out.raw = same(buf, from, to, k.usual)
        ? k.usual
        : same(buf, from, to, k.lower)
          ? k.lower
          : buf.toString("latin1", from, to);
      return;
    }
  }
  out.raw = buf.toString("latin1", from, to);
  out.lower = out.raw.toLowerCase();
}
