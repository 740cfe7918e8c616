/**
 * The upstream's response head: status, headers and how the body is framed (RFC 9112 §6.3). Parsed as
 * strictly as requests — an upstream head that could be read two ways is a 502, not passed on. Framing
 * decides where the response ends, so the upstream connection can be reused exactly then.
 */
import { isTchar } from "./chars.ts";
import { parseContentLength, tokens } from "./request-head.ts";

export const RES_NONE = 0;
export const RES_LENGTH = 1;
export const RES_CHUNKED = 2;
/** Delimited by the upstream closing the connection. */
export const RES_CLOSE = 3;

export interface ResponseHead {
  readonly status: number;
  readonly reason: string;
  readonly rawNames: readonly string[];
  readonly names: readonly string[];
  readonly values: readonly string[];
  readonly bodyKind: 0 | 1 | 2 | 3;
  readonly contentLength: number;
  /** The upstream connection may be reused after this response. */
  readonly reusable: boolean;
  /** Lower-case tokens of the Connection header. */
  readonly connection: readonly string[];
}

const MAX_RESPONSE_HEAD = 64 * 1024;

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
  if (headEnd - start > MAX_RESPONSE_HEAD) return undefined;
  let lf = buf.indexOf(10, start);
  if (lf < start + 12 || buf[lf - 1] !== 13) return undefined;
  // "HTTP/1.x SSS" then optionally " reason"
  if (buf.toString("latin1", start, start + 7) !== "HTTP/1." || buf[start + 8] !== 32) return undefined;
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
  const reason = lf - 1 > start + 13 ? buf.toString("latin1", start + 13, lf - 1) : "";
  for (let i = start + 13; i < lf - 1; i++) {
    const c = buf[i] as number;
    if ((c < 0x20 && c !== 9) || c === 0x7f) return undefined;
  }
  const rawNames: string[] = [];
  const names: string[] = [];
  const values: string[] = [];
  let length = -1;
  let te: string | null = null;
  let connection: string[] = [];
  let pos = lf + 1;
  for (;;) {
    lf = buf.indexOf(10, pos);
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
    const rawName = buf.toString("latin1", pos, j);
    const name = rawName.toLowerCase();
    const value = buf.toString("latin1", vs, ve);
    rawNames.push(rawName);
    names.push(name);
    values.push(value);
    if (name === "content-length") {
      const n = parseContentLength(value);
      if (n < 0 || (length >= 0 && n !== length)) return undefined;
      length = n;
    } else if (name === "transfer-encoding") te = te === null ? value : `${te},${value}`;
    else if (name === "connection") connection = connection.concat(tokens(value));
    pos = lf + 1;
  }
  let bodyKind: 0 | 1 | 2 | 3;
  let reusable = !connection.includes("close") && (!http10 || connection.includes("keep-alive"));
  if (noBody || status < 200 || status === 204 || status === 304) bodyKind = RES_NONE;
  else if (te !== null) {
    const codings = tokens(te);
    bodyKind = codings[codings.length - 1] === "chunked" ? RES_CHUNKED : RES_CLOSE;
    // Both headers: TE wins (RFC 9112 §6.3), but such a connection is not trusted again.
    if (length >= 0) reusable = false;
  } else if (length >= 0) bodyKind = length === 0 ? RES_NONE : RES_LENGTH;
  else bodyKind = RES_CLOSE;
  if (bodyKind === RES_CLOSE) reusable = false;
  return {
    status,
    reason,
    rawNames,
    names,
    values,
    bodyKind,
    contentLength: bodyKind === RES_LENGTH ? length : 0,
    reusable,
    connection,
  };
}
