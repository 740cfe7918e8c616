/**
 * Byte helpers of the raw-socket parsers. The RFC 9110 token check they use (`isTchar`, `isToken`) lives in
 * src/model/http-syntax.ts, which translate shares.
 */

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

/** Comma-separated list → trimmed, lower-case, non-empty elements. */
export function tokens(value: string): string[] {
  const out: string[] = [];
  for (const part of value.split(",")) {
    const t = part.trim().toLowerCase();
    if (t !== "") out.push(t);
  }
  return out;
}
