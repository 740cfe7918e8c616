/** Byte classes of RFC 9110 used by the raw-socket parsers, as a lookup table (no regexes per request). */

const TCHAR = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9!#$%&'*+\-.^_`|~]/.test(ch)) TCHAR[c] = 1;
}

/** RFC 9110 §5.6.2 `tchar`: the characters of a method, header name or other token. */
export function isTchar(c: number): boolean {
  return TCHAR[c] === 1;
}

/** A non-empty string of tchar: a method, a field name, a transfer coding. */
export function isToken(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isTchar(s.charCodeAt(i))) return false;
  return s.length > 0;
}

/** `buf[from, to)` equals `lower` ignoring ASCII case (`lower` is lower-case): a field name compared
 * as bytes, no string made. */
export function nameIs(buf: Uint8Array, from: number, to: number, lower: string): boolean {
  if (to - from !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) {
    let c = buf[from + i] as number;
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/** Hex digit value, or -1. */
export function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Copies `src[from, to)` into `dst` at `at`; returns the end. Short runs in JS, long ones natively. */
export function copyBytes(src: Buffer, from: number, to: number, dst: Uint8Array, at: number): number {
  const n = to - from;
  if (n > 64) src.copy(dst, at, from, to);
  else for (let k = 0; k < n; k++) dst[at + k] = src[from + k] as number;
  return at + n;
}
