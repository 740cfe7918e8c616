/**
 * The HTTP/2 connection preface (RFC 9113 §3.4): a client speaking cleartext HTTP/2 with prior knowledge
 * (§3.3) opens with these 24 bytes. The raw front compares a connection's first bytes with it once; no
 * HTTP/1.1 method starts with "PRI", so a mismatch is known by the first differing byte (usually the
 * first) and the HTTP/1.1 path pays nothing more.
 */

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** The bytes are not the preface: HTTP/1.1. */
export const NOT_PREFACE = 0;
/** The bytes so far are the preface's beginning: wait for more (it may arrive split across reads). */
export const PREFACE_SO_FAR = 1;
/** The whole preface: HTTP/2. */
export const PREFACE_WHOLE = 2;

export type PrefaceMatch = typeof NOT_PREFACE | typeof PREFACE_SO_FAR | typeof PREFACE_WHOLE;

export function matchPreface(buf: Buffer, start: number, end: number): PrefaceMatch {
  const n = Math.min(end - start, PREFACE.length);
  for (let i = 0; i < n; i++) if (buf[start + i] !== PREFACE[i]) return NOT_PREFACE;
  return n === PREFACE.length ? PREFACE_WHOLE : PREFACE_SO_FAR;
}
