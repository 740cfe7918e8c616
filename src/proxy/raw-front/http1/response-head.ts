/**
 * The upstream's response head: status, headers and how the body is framed (RFC 9112 §6.3). Parsed as
 * strictly as requests — an upstream head that could be read two ways is a 502, not passed on. Framing
 * decides where the response ends, so the upstream connection can be reused exactly then.
 */
import { isTchar, MAX_RESPONSE_HEAD_BYTES } from "../../../model/http-syntax.ts";
import { HOP_BY_HOP } from "../../request/hop-by-hop.ts";
import { nameIs, tokens } from "./chars.ts";
import { contentLengthAt } from "./request-head.ts";

export const RES_NONE = 0;
export const RES_LENGTH = 1;
export const RES_CHUNKED = 2;
/** Delimited by the upstream closing the connection. */
export const RES_CLOSE = 3;

/** What a field's name is, for the few names the fast path acts on (compared as bytes, no string made). */
export const F_OTHER = 0;
export const F_CONTENT_LENGTH = 1;
export const F_TRANSFER_ENCODING = 2;
export const F_CONNECTION = 3;
/** The rest of HOP_BY_HOP (keep-alive, proxy-connection, te, …): this hop's, dropped like the two above. */
export const F_HOP = 4;
export const F_SERVER = 5;
export const F_DATE = 6;

/** Per field in `ResponseHead.spans`: kind, name start, name end, value start, value end. */
export const SPAN = 5;

/**
 * A parsed response head. The fields stay where they are in `buf` (`spans`); their strings are made
 * only when something asks for `names`/`values`/`rawNames` (response filters, edits by name), so a
 * plain pass-through makes none (head-to-client.ts `passedOnHead` copies the bytes).
 */
export class ResponseHead {
  private lazyNames: string[] | undefined;
  private lazyRaw: string[] | undefined;
  private lazyValues: string[] | undefined;

  constructor(
    readonly buf: Buffer,
    /** Start of the status line. */
    readonly start: number,
    readonly status: number,
    /** The reason phrase's bytes: `buf[reasonStart, reasonEnd)` (empty when the upstream sent none). */
    readonly reasonStart: number,
    readonly reasonEnd: number,
    /** SPAN numbers per field, in order: kind (F_*), name start/end, value start/end (OWS trimmed). */
    readonly spans: readonly number[],
    readonly bodyKind: 0 | 1 | 2 | 3,
    readonly contentLength: number,
    /** The upstream connection may be reused after this response. */
    readonly reusable: boolean,
    /** Lower-case tokens of the Connection header. */
    readonly connection: readonly string[],
  ) {}

  get reason(): string {
    return this.buf.toString("latin1", this.reasonStart, this.reasonEnd);
  }

  /** Field names as sent. */
  get rawNames(): readonly string[] {
    if (this.lazyRaw === undefined) this.lazyRaw = this.decode(1);
    return this.lazyRaw;
  }

  /** Field names, lower-case. */
  get names(): readonly string[] {
    if (this.lazyNames === undefined) this.lazyNames = this.rawNames.map((n) => n.toLowerCase());
    return this.lazyNames;
  }

  get values(): readonly string[] {
    if (this.lazyValues === undefined) this.lazyValues = this.decode(3);
    return this.lazyValues;
  }

  /** Every field's bytes from span offset `at` to `at + 1` (1: the name, 3: the value) as strings. */
  private decode(at: 1 | 3): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.spans.length; i += SPAN)
      out.push(this.buf.toString("latin1", this.spans[i + at] as number, this.spans[i + at + 1] as number));
    return out;
  }
}

const HTTP1 = "HTTP/1.";

/** The names the fast path acts on, indexed by length (compared as bytes: no string per field). */
const KNOWN: (readonly (readonly [string, number])[] | undefined)[] = [];
/** Framing and our own fields by name; every other hop-by-hop name (hop-by-hop.ts, the one list) is F_HOP. */
const SPECIFIC: Readonly<Record<string, number>> = {
  connection: F_CONNECTION,
  "transfer-encoding": F_TRANSFER_ENCODING,
  "content-length": F_CONTENT_LENGTH,
  server: F_SERVER,
  date: F_DATE,
};
for (const name of new Set([...HOP_BY_HOP, ...Object.keys(SPECIFIC)]))
  KNOWN[name.length] = [...(KNOWN[name.length] ?? []), [name, SPECIFIC[name] ?? F_HOP]];

/** The F_* kind of the name `buf[from, to)`. */
function fieldKind(buf: Uint8Array, from: number, to: number): number {
  const candidates = KNOWN[to - from];
  if (candidates !== undefined)
    for (const [name, kind] of candidates) if (nameIs(buf, from, to, name)) return kind;
  return F_OTHER;
}

/** The first LF in `buf[from, limit)`, or -1: a byte loop (a native indexOf call per line costs more). */
function lfAt(buf: Uint8Array, from: number, limit: number): number {
  for (let i = from; i < limit; i++) if (buf[i] === 10) return i;
  return -1;
}

/**
 * Parses `buf[start, headEnd)` (a complete head, see `findHeadEnd`); `noBody` for answers to HEAD.
 * Returns undefined when the head is malformed.
 */
export function parseResponseHead(
  buf: Buffer,
  start: number,
  headEnd: number,
  noBody: boolean,
): ResponseHead | undefined {
  if (headEnd - start > MAX_RESPONSE_HEAD_BYTES) return undefined;
  let lf = lfAt(buf, start, headEnd);
  if (lf < start + 12 || buf[lf - 1] !== 13) return undefined;
  // "HTTP/1.x SSS" then optionally " reason"
  for (let i = 0; i < 7; i++) if (buf[start + i] !== HTTP1.charCodeAt(i)) return undefined;
  if (buf[start + 8] !== 32) return undefined;
  const minor = buf[start + 7];
  if (minor !== 48 && minor !== 49) return undefined;
  const http10 = minor === 48;
  let status = 0;
  for (let i = start + 9; i < start + 12; i++) {
    const d = (buf[i] as number) - 48;
    if (d < 0 || d > 9) return undefined;
    status = status * 10 + d;
  }
  if (status < 100 || (lf - 1 > start + 12 && buf[start + 12] !== 32)) return undefined;
  const reasonStart = start + 13;
  const reasonEnd = Math.max(lf - 1, reasonStart);
  for (let i = start + 13; i < lf - 1; i++) {
    const c = buf[i] as number;
    if ((c < 0x20 && c !== 9) || c === 0x7f) return undefined;
  }
  const spans: number[] = [];
  let length = -1;
  let te: string | null = null;
  let connection: string[] = [];
  let pos = lf + 1;
  for (;;) {
    lf = lfAt(buf, pos, headEnd);
    if (lf < 0 || lf >= headEnd || lf === pos || buf[lf - 1] !== 13) return undefined;
    const end = lf - 1;
    if (end === pos) break;
    let j = pos;
    while (j < end && isTchar(buf[j] as number)) j++;
    if (j === pos || buf[j] !== 58) return undefined;
    let vs = j + 1;
    let ve = end;
    while (vs < ve && (buf[vs] === 32 || buf[vs] === 9)) vs++;
    while (ve > vs && (buf[ve - 1] === 32 || buf[ve - 1] === 9)) ve--;
    for (let k = vs; k < ve; k++) {
      const c = buf[k] as number;
      if ((c < 0x20 && c !== 9) || c === 0x7f) return undefined;
    }
    const kind = fieldKind(buf, pos, j);
    spans.push(kind, pos, j, vs, ve);
    if (kind === F_CONTENT_LENGTH) {
      const n = contentLengthAt(buf, vs, ve);
      if (n < 0 || (length >= 0 && n !== length)) return undefined;
      length = n;
    } else if (kind === F_TRANSFER_ENCODING) {
      const value = buf.toString("latin1", vs, ve);
      te = te === null ? value : `${te},${value}`;
    } else if (kind === F_CONNECTION) connection = connection.concat(tokens(buf.toString("latin1", vs, ve)));
    pos = lf + 1;
  }
  let bodyKind: 0 | 1 | 2 | 3;
  let reusable = !connection.includes("close") && (!http10 || connection.includes("keep-alive"));
  if (noBody || status < 200 || status === 204 || status === 304) bodyKind = RES_NONE;
  else if (te !== null) {
    // Only chunked is relayed: another coding's bytes would reach the client still coded, its name
    // dropped with the hop-by-hop header (nginx answers 502 too).
    const codings = tokens(te);
    if (codings.length !== 1 || codings[0] !== "chunked") return undefined;
    bodyKind = RES_CHUNKED;
    // Both headers: TE wins (RFC 9112 §6.3), but such a connection is not trusted again.
    if (length >= 0) reusable = false;
  } else if (length >= 0) bodyKind = length === 0 ? RES_NONE : RES_LENGTH;
  else bodyKind = RES_CLOSE;
  if (bodyKind === RES_CLOSE) reusable = false;
  return new ResponseHead(
    buf,
    start,
    status,
    reasonStart,
    reasonEnd,
    spans,
    bodyKind,
    bodyKind === RES_LENGTH ? length : 0,
    reusable,
    connection,
  );
}
