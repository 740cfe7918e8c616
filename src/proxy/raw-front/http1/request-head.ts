/**
 * Strict HTTP/1.x request-head parser for the raw-socket front (RFC 9112). This is the internet-facing
 * edge, so anything two parsers could read differently is refused instead of guessed: CRLF only (a bare
 * LF or CR is 400), no obs-fold, no whitespace before a header's colon, header values without CTLs,
 * Content-Length only as digits (a list of equal values is allowed, differing ones are not),
 * Transfer-Encoding only as exactly `chunked`, never together with Content-Length, and Host
 * required on HTTP/1.1. The body boundary is then exact, which is what prevents request smuggling.
 * A field whose name contains `_` is dropped here, before anything reads it, unless the listener keeps
 * them (`--underscores-in-headers`, nginx's `underscores_in_headers`): CGI-style backends read `_` and
 * `-` as one, so `X_Forwarded_For` or `Transfer_Encoding` would pass for a field the gateway checked.
 */
import {
  DEFAULT_REQUEST_HEAD_LIMITS,
  isTchar,
  isToken,
  MAX_REQUEST_HEADER_FIELDS,
  MAX_REQUEST_LINE,
  type RequestHeadLimits,
} from "../../../model/http-syntax.ts";
import { nameIs, tokens } from "./chars.ts";
import { knownName, methodAt, NAME_HASH_BASIS, nameHashStep } from "./interned.ts";
import { absoluteForm } from "./target-path.ts";

export const BODY_NONE = 0;
export const BODY_LENGTH = 1;
export const BODY_CHUNKED = 2;

/** Numbers per field in `RequestHead.spans`: name start, name end, value start, value end (OWS
 * trimmed), and the end of the line (its CR). */
export const FIELD = 5;

/**
 * A parsed request head. The fields stay where they are in `buf` (`spans`); a common name is known as
 * its interned lower-case string (`known`), and every other string — names as sent, unknown names,
 * values — is made only when something asks (`value(i)`, `lowerName(i)`, or the arrays), so forwarding a
 * request makes none per field: head-to-upstream.ts copies the kept lines as they are.
 */
export class RequestHead {
  private lazyRaw: string[] | undefined;
  private lazyNames: string[] | undefined;
  private lazyValues: string[] | undefined;

  constructor(
    readonly buf: Buffer,
    readonly method: string,
    /**
     * The request-target as sent, latin1-decoded (no controls or spaces; bytes ≥ 0x80 allowed); an
     * absolute-form target as its origin-form (its authority is `host`, `hostFromTarget`).
     */
    readonly target: string,
    readonly http10: boolean,
    /** FIELD numbers per field, in order. */
    readonly spans: Int32Array,
    /** Per field: its lower-case name when it is a common one (interned.ts), else undefined. */
    readonly known: readonly (string | undefined)[],
    readonly bodyKind: 0 | 1 | 2,
    /** Body length for BODY_LENGTH, else 0. */
    readonly contentLength: number,
    /**
     * The host routing uses: an absolute-form target's authority (RFC 9112 §3.2.2), else the Host value
     * (several Host fields joined with ", "); null when none was sent.
     */
    readonly host: string | null,
    /** How many Host fields were sent. */
    readonly hostFields: number,
    /** Whether the connection may carry another request after this one. */
    readonly keepAlive: boolean,
    /** Lower-case tokens of the Connection header (hop-by-hop names to drop). */
    readonly connection: readonly string[],
    /** The Upgrade header when Connection names `upgrade`, else null. */
    readonly upgrade: string | null,
    readonly expectContinue: boolean,
    /** A Content-Length field was sent (even `0`). */
    readonly sentLength: boolean,
    /** `host` is an absolute-form target's authority: the Host fields sent are replaced upstream. */
    readonly hostFromTarget = false,
    /** Names (as sent) of the fields dropped for a `_` in their name; they are in no other member. */
    readonly dropped: readonly string[] = NONE_DROPPED,
  ) {}

  get fieldCount(): number {
    return this.known.length;
  }

  /** Field `i`'s value (OWS trimmed). */
  value(i: number): string {
    const at = i * FIELD;
    return this.buf.toString("latin1", this.spans[at + 2] as number, this.spans[at + 3] as number);
  }

  /** Field `i`'s name, lower-case. */
  lowerName(i: number): string {
    return this.known[i] ?? this.rawName(i).toLowerCase();
  }

  /** Field `i`'s name as sent. */
  rawName(i: number): string {
    const at = i * FIELD;
    return this.buf.toString("latin1", this.spans[at] as number, this.spans[at + 1] as number);
  }

  /** Whether field `i` is named `lower` (a lower-case name), compared without making a string. */
  nameIs(i: number, lower: string): boolean {
    const k = this.known[i];
    if (k !== undefined) return k === lower;
    const at = i * FIELD;
    return nameIs(this.buf, this.spans[at] as number, this.spans[at + 1] as number, lower);
  }

  /** Header names as sent, lower-case names and values (OWS trimmed), in order. */
  get rawNames(): readonly string[] {
    if (this.lazyRaw === undefined) this.lazyRaw = this.each((i) => this.rawName(i));
    return this.lazyRaw;
  }

  get names(): readonly string[] {
    if (this.lazyNames === undefined) this.lazyNames = this.each((i) => this.lowerName(i));
    return this.lazyNames;
  }

  get values(): readonly string[] {
    if (this.lazyValues === undefined) this.lazyValues = this.each((i) => this.value(i));
    return this.lazyValues;
  }

  private each(f: (i: number) => string): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.known.length; i++) out.push(f(i));
    return out;
  }
}

const NONE_DROPPED: readonly string[] = [];

/** Content-Length above this (9 PB) is refused rather than risk precision loss. */
const MAX_DIGITS = 15;

/** parseRequestHead's working arrays (it never re-enters); each head gets copies of its part. */
const SPANS = new Int32Array(MAX_REQUEST_HEADER_FIELDS * FIELD);
const KNOWN: (string | undefined)[] = new Array(MAX_REQUEST_HEADER_FIELDS).fill(undefined);

/**
 * Index just after the blank line ending the head in `buf[from, end)`, or -1 when it is not complete.
 * `from` may point into the middle of the head (resume scanning); a bare-LF ending is reported as
 * complete too, so that the parser refuses it at once instead of waiting for more bytes.
 */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  // A byte loop, not Buffer.indexOf: a native call per line cost more than scanning a short head here.
  for (let i = from; i < end; i++) {
    if (buf[i] !== 10) continue;
    if (i + 1 >= end) return -1;
    const n = buf[i + 1];
    if (n === 10) return i + 2;
    if (n === 13) {
      if (i + 2 >= end) return -1;
      if (buf[i + 2] === 10) return i + 3;
    }
  }
  return -1;
}

/**
 * Parses the complete head `buf[start, headEnd)` (as found by `findHeadEnd`). Returns the head, or the
 * status to answer with: 400, 414 (request line too long), 431 (too many / too large headers), 501
 * (a transfer coding we do not implement), 505 (HTTP version). `underscores`: keep fields whose name
 * contains `_` (else they are dropped, and listed in `dropped`). `limits`: `--max-request-header-*`.
 */
export function parseRequestHead(
  buf: Buffer,
  start: number,
  headEnd: number,
  underscores = false,
  limits: RequestHeadLimits = DEFAULT_REQUEST_HEAD_LIMITS,
): RequestHead | number {
  if (headEnd - start > limits.bytes) return 431;
  // Request line: method SP target SP HTTP/1.x CRLF
  const lineEnd = lineEndAt(buf, start, headEnd);
  if (lineEnd < 0) return 400;
  if (lineEnd - start > MAX_REQUEST_LINE) return 414;
  let i = start;
  for (; i < lineEnd; i++) {
    const c = buf[i] as number;
    if (!isTchar(c)) break;
    // Methods are case-sensitive (RFC 9110 §9.1): `get` is not GET. nginx refuses lower case, as do we.
    if (c >= 97 && c <= 122) return 400;
  }
  if (i === start || buf[i] !== 32) return 400;
  const method = methodAt(buf, start, i);
  const targetStart = ++i;
  while (i < lineEnd) {
    const c = buf[i] as number;
    if (c === 32) break;
    // Bytes above 0x7e (raw UTF-8) are accepted as Bun.serve does; routing percent-encodes them.
    if (c < 0x21 || c === 0x7f) return 400;
    i++;
  }
  if (i === targetStart || i === lineEnd) return 400;
  const target = buf.toString("latin1", targetStart, i);
  const http10 = versionAt(buf, i + 1, lineEnd);
  if (typeof http10 === "number") return http10;

  // Filled here and copied out at their exact size at the end (growing arrays field by field cost more).
  const spans = SPANS;
  const known = KNOWN;
  let fields = 0;
  let host: string | null = null;
  let hostFields = 0;
  let length = -1;
  let te: string | null = null;
  let connection: string[] = [];
  let upgradeValue: string | null = null;
  let expectContinue = false;
  let dropped: string[] | undefined;
  let pos = lineEnd + 2;
  for (;;) {
    const end = lineEndAt(buf, pos, headEnd);
    if (end < 0) return 400;
    if (end === pos) break; // the blank line
    // Dropped fields count too: whether a head is refused does not depend on how its names are spelt.
    if (fields + (dropped?.length ?? 0) >= limits.fields) return 431;
    let j = pos;
    // The name's case-folded hash (interned.ts looks common names up by it) and any `_`, in one pass.
    let hash = NAME_HASH_BASIS;
    let underscore = false;
    for (; j < end; j++) {
      const c = buf[j] as number;
      if (!isTchar(c)) break;
      if (c === 95) underscore = true;
      hash = nameHashStep(hash, c);
    }
    // Covers obs-fold (a line starting with SP/HTAB) and whitespace before the colon.
    if (j === pos || buf[j] !== 58) return 400;
    let vs = j + 1;
    let ve = end;
    while (vs < ve && (buf[vs] === 32 || buf[vs] === 9)) vs++;
    while (ve > vs && (buf[ve - 1] === 32 || buf[ve - 1] === 9)) ve--;
    for (let k = vs; k < ve; k++) {
      const c = buf[k] as number;
      if ((c < 0x20 && c !== 9) || c === 0x7f) return 400;
    }
    if (underscore && !underscores) {
      // Checked like any line above, then left out of `spans`: no lookup, guard or forwarding sees it.
      dropped = (dropped ?? []).concat(buf.toString("latin1", pos, j));
      pos = end + 2;
      continue;
    }
    // Every name acted on below is a known one, whatever its case (interned.ts); other names stay bytes.
    const name = knownName(buf, pos, j, hash);
    const at = fields * FIELD;
    spans[at] = pos;
    spans[at + 1] = j;
    spans[at + 2] = vs;
    spans[at + 3] = ve;
    spans[at + 4] = end;
    known[fields++] = name;
    switch (name) {
      case "host": {
        // Repeated Host fields are joined as Bun.serve's Headers does: then no host matches (the
        // catch-all, as on the Bun front), and head-to-upstream.ts sends that one joined value.
        const value = buf.toString("latin1", vs, ve);
        host = host === null ? value : `${host}, ${value}`;
        hostFields++;
        break;
      }
      case "content-length": {
        const n = contentLengthAt(buf, vs, ve);
        if (n < 0 || (length >= 0 && n !== length)) return 400;
        length = n;
        break;
      }
      case "transfer-encoding": {
        const value = buf.toString("latin1", vs, ve);
        te = te === null ? value : `${te},${value}`;
        break;
      }
      case "connection":
        connection = connection.concat(tokens(buf.toString("latin1", vs, ve)));
        break;
      case "upgrade":
        upgradeValue = buf.toString("latin1", vs, ve);
        break;
      case "expect":
        expectContinue = buf.toString("latin1", vs, ve).toLowerCase() === "100-continue";
        break;
    }
    pos = end + 2;
  }
  if (host === null && !http10) return 400;
  // RFC 9112 §3.2.2: an absolute-form target's authority is the host, whatever Host says.
  let routed = target;
  let hostFromTarget = false;
  if (target.charCodeAt(0) !== 47) {
    const abs = absoluteForm(target);
    if (abs === undefined) return 400;
    if (abs !== null) {
      routed = abs.originForm;
      host = abs.authority;
      hostFromTarget = true;
    }
  }
  let bodyKind: 0 | 1 | 2 = length > 0 ? BODY_LENGTH : BODY_NONE;
  if (te !== null) {
    // RFC 9112 §6.1: both present is a smuggling attempt as far as an intermediary is concerned.
    if (length >= 0 || http10) return 400;
    const codings = tokens(te);
    if (codings.length === 1 && codings[0] === "chunked") bodyKind = BODY_CHUNKED;
    else return codings[codings.length - 1] === "chunked" && codings.every(isToken) ? 501 : 400;
  }
  const close = connection.includes("close");
  const keepAlive = http10 ? !close && connection.includes("keep-alive") : !close;
  const upgrade = upgradeValue !== null && connection.includes("upgrade") ? upgradeValue : null;
  return new RequestHead(
    buf,
    method,
    routed,
    http10,
    spans.slice(0, fields * FIELD),
    known.slice(0, fields),
    bodyKind,
    bodyKind === BODY_LENGTH ? length : 0,
    host,
    hostFields,
    keepAlive,
    connection,
    upgrade,
    expectContinue,
    length >= 0,
    hostFromTarget,
    dropped,
  );
}

/** Index of the CR of the CRLF ending the line at `pos`, or -1 for a bare LF / bare CR / no end. */
export function lineEndAt(buf: Uint8Array, pos: number, limit: number): number {
  for (let i = pos; i < limit; i++) {
    const c = buf[i];
    if (c === 13) return i + 1 < limit && buf[i + 1] === 10 ? i : -1;
    if (c === 10) return -1;
  }
  return -1;
}

/**
 * `HTTP/1.1` → false, `HTTP/1.0` → true; a higher 1.x (`HTTP/1.2`) → false: RFC 9110 §2.5 and RFC 9112
 * §2.3 have a server take a higher minor version of a major version it implements as the highest minor
 * it knows (nginx does). Another major version → 505; anything else → 400.
 */
function versionAt(buf: Uint8Array, at: number, lineEnd: number): boolean | number {
  if (lineEnd - at !== 8) return 400;
  // "HTTP/" then DIGIT "." DIGIT
  if (buf[at] !== 72 || buf[at + 1] !== 84 || buf[at + 2] !== 84 || buf[at + 3] !== 80 || buf[at + 4] !== 47)
    return 400;
  const major = (buf[at + 5] as number) - 48;
  const minor = (buf[at + 7] as number) - 48;
  if (major < 0 || major > 9 || minor < 0 || minor > 9 || buf[at + 6] !== 46) return 400;
  if (major !== 1) return 505;
  return minor === 0;
}

/** Content-Length from its bytes when it is plain digits (the common case), else parseContentLength. */
export function contentLengthAt(buf: Buffer, from: number, to: number): number {
  if (to - from > 0 && to - from <= MAX_DIGITS) {
    let n = 0;
    let digits = true;
    for (let i = from; i < to; i++) {
      const d = (buf[i] as number) - 48;
      if (d < 0 || d > 9) {
        digits = false;
        break;
      }
      n = n * 10 + d;
    }
    if (digits) return n;
  }
  return parseContentLength(buf.toString("latin1", from, to));
}

/** Digits, or a comma-separated list of equal digit strings; -1 when invalid. */
export function parseContentLength(value: string): number {
  let result = -1;
  for (const part of value.split(",")) {
    const v = part.trim();
    if (v.length === 0 || v.length > MAX_DIGITS) return -1;
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c < 48 || c > 57) return -1;
    }
    const n = Number(v);
    if (result >= 0 && n !== result) return -1;
    result = n;
  }
  return result;
}

/** The request line `buf[start, lineEnd)` ends with an ` HTTP/` version (a CR may precede the LF). */
export function hasVersion(buf: Buffer, start: number, lineEnd: number): boolean {
  return buf.lastIndexOf(" HTTP/", lineEnd) >= start;
}
