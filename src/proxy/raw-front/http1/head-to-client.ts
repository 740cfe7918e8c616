/**
 * Response heads the fast path writes to the client: an upstream response passed on (this hop's fields
 * removed, `Server` added when missing, then the route's response filters, as prepareClientResponse and
 * runResponseFilters do), and the small answers the gateway makes itself (same bodies as responses.ts).
 */

import { STATUS_CODES } from "node:http";
import type { ContentCoding } from "../../../model/index.ts";
import { editEncodedFields } from "../../compression/response-rules.ts";
import { ownErrorBody } from "../../error-pages/own-bodies.ts";
import type { ResponseFilter } from "../../filters/filter-types.ts";
import { HOP_BY_HOP } from "../../request/hop-by-hop.ts";
import { STATUS_TEXT } from "../../request/responses.ts";
import { type Latin1Buffer, scratch } from "../outbox.ts";
import { copyBytes, nameIs } from "./chars.ts";
import {
  F_CONNECTION,
  F_CONTENT_LENGTH,
  F_DATE,
  F_HOP,
  F_SERVER,
  F_TRANSFER_ENCODING,
  RES_CHUNKED,
  RES_LENGTH,
  type ResponseHead,
  SPAN,
} from "./response-head.ts";

const HOP: ReadonlySet<string> = new Set(HOP_BY_HOP);

const NO_REQUEST = new Request("http://fast-path.invalid/");

/**
 * Fields the edge guards add to a response after the route's filters: `append` (auth's), then `set`
 * (rate limit headers, which replace any of the same name). Applied without a Headers object when the
 * route has no response filters. Names lower-case.
 */
export interface ResponseHeaderEdit {
  readonly append: readonly (readonly [string, string])[];
  readonly set: readonly (readonly [string, string])[];
}

function editLines(edit: ResponseHeaderEdit): string {
  let out = "";
  for (const [name, value] of edit.append) out += `${name}: ${value}\r\n`;
  for (const [name, value] of edit.set) out += `${name}: ${value}\r\n`;
  return out;
}

function applyEdit(h: Headers, edit: ResponseHeaderEdit): void {
  for (const [name, value] of edit.append) h.append(name, value);
  for (const [name, value] of edit.set) h.set(name, value);
}

/**
 * What this hop adds after the fields, by `chunked | close << 1 | keepAlive10 << 2`: constants, so no
 * string is built per response.
 */
const TAILS: readonly string[] = Array.from({ length: 8 }, (_, k) => {
  let t = "";
  if (k & 1) t += "Transfer-Encoding: chunked\r\n";
  if (k & 2) t += "Connection: close\r\n";
  else if (k & 4) t += "Connection: keep-alive\r\n";
  return `${t}\r\n`;
});

/**
 * The head passed on to the client for the upstream's `res`, followed by `body[bodyStart, bodyEnd)` (the
 * first body bytes, which go out in the same write; a range, so the caller makes no view of them).
 * Without response filters no string is made: kept field lines are copied from the upstream's buffer (as
 * `Name: value`, OWS trimmed) and our fields encoded in place, into the Outbox scratch buffer when they
 * fit (the result is then the length there, for `writeScratch`; nothing is allocated), else into a
 * Buffer of their own, which is returned. With filters: a Buffer.
 * @param chunkedOut the body goes out chunked (upstream chunked and the client speaks 1.1)
 * @param close the client connection closes after this response
 */
export function passedOnHead(
  res: ResponseHead,
  serverHeader: string,
  chunkedOut: boolean,
  close: boolean,
  http10Client: boolean,
  filters: readonly ResponseFilter[],
  edit?: ResponseHeaderEdit,
  body?: Buffer,
  bodyStart = 0,
  bodyEnd = body === undefined ? 0 : body.length,
): Buffer | number {
  const tail = TAILS[
    (chunkedOut && res.bodyKind === RES_CHUNKED ? 1 : 0) | (close ? 2 : 0) | (http10Client ? 4 : 0)
  ] as string;
  if (filters.length > 0) {
    const head = `HTTP/1.1 ${res.status} ${res.reason}\r\n${filteredFields(res, serverHeader, filters, edit)}${tail}`;
    return withBody(head, body, bodyStart, bodyEnd);
  }
  const { buf, spans } = res;
  // "HTTP/1.1 " SSS " " reason CRLF, then the kept fields, then what we add.
  let size = 15 + (res.reasonEnd - res.reasonStart);
  let server = false;
  let date = false;
  KEPT.length = 0;
  for (let i = 0; i < spans.length; i += SPAN) {
    if (!kept(res, i, edit)) continue;
    KEPT.push(i);
    const kind = spans[i] as number;
    if (kind === F_SERVER) server = true;
    else if (kind === F_DATE) date = true;
    size +=
      (spans[i + 2] as number) -
      (spans[i + 1] as number) +
      (spans[i + 4] as number) -
      (spans[i + 3] as number) +
      4;
  }
  // Bun.serve adds Date to every response; so does this front (RFC 9110 §6.6.1).
  const dateValue = date ? "" : httpDate();
  const edits = edit === undefined ? "" : editLines(edit);
  if (!server) size += 10 + serverHeader.length;
  if (!date) size += 8 + dateValue.length;
  size += edits.length + tail.length + (bodyEnd - bodyStart);
  const sc = scratch();
  const out: Latin1Buffer = size <= sc.length ? sc : (Buffer.allocUnsafe(size) as Latin1Buffer);
  let o = out.latin1Write("HTTP/1.1 ", 0);
  o = copyBytes(buf, res.start + 9, res.start + 12, out, o);
  out[o++] = 32;
  o = copyBytes(buf, res.reasonStart, res.reasonEnd, out, o);
  out[o++] = 13;
  out[o++] = 10;
  for (const i of KEPT) {
    o = copyBytes(buf, spans[i + 1] as number, spans[i + 2] as number, out, o);
    out[o++] = 58;
    out[o++] = 32;
    o = copyBytes(buf, spans[i + 3] as number, spans[i + 4] as number, out, o);
    out[o++] = 13;
    out[o++] = 10;
  }
  if (!server) {
    o += out.latin1Write("Server: ", o);
    o += out.latin1Write(serverHeader, o);
    out[o++] = 13;
    out[o++] = 10;
  }
  if (!date) {
    o += out.latin1Write("Date: ", o);
    o += out.latin1Write(dateValue, o);
    out[o++] = 13;
    out[o++] = 10;
  }
  if (edits.length > 0) o += out.latin1Write(edits, o);
  o += out.latin1Write(tail, o);
  if (body !== undefined) copyBytes(body, bodyStart, bodyEnd, out, o);
  return out === sc ? size : out;
}

/** Span offsets of the fields passedOnHead keeps, reused by every call (it never re-enters). */
const KEPT: number[] = [];

/**
 * Whether the field at `spans[i]` is passed on (no response filters): not this hop's (the fixed list
 * and whatever Connection names, except Content-Length, which frames the body we pass on as the
 * upstream framed it), and not one the edge guards set themselves.
 */
function kept(res: ResponseHead, i: number, edit: ResponseHeaderEdit | undefined): boolean {
  const { buf, spans } = res;
  const kind = spans[i] as number;
  if (kind === F_CONNECTION || kind === F_TRANSFER_ENCODING || kind === F_HOP) return false;
  const from = spans[i + 1] as number;
  const to = spans[i + 2] as number;
  if (edit !== undefined) for (const [n] of edit.set) if (nameIs(buf, from, to, n)) return false;
  const named = res.connection;
  if (named.length > 0 && kind !== F_CONTENT_LENGTH)
    for (const t of named) if (nameIs(buf, from, to, t)) return false;
  return true;
}

/**
 * `passedOnHead` for a body we compress (compression/): the upstream's fields edited as the full
 * request path edits them (response-rules.ts: Content-Encoding, Vary, no Content-Length, a weak ETag),
 * before the route's response filters; the body goes out chunked when `chunkedOut`, else until close.
 */
export function encodedHead(
  coding: ContentCoding,
  res: ResponseHead,
  serverHeader: string,
  chunkedOut: boolean,
  close: boolean,
  http10Client: boolean,
  filters: readonly ResponseFilter[],
  edit?: ResponseHeaderEdit,
  body?: Buffer,
  bodyStart = 0,
  bodyEnd = body === undefined ? 0 : body.length,
): Buffer {
  const tail = TAILS[(chunkedOut ? 1 : 0) | (close ? 2 : 0) | (http10Client ? 4 : 0)] as string;
  const fields = filteredFields(res, serverHeader, filters, edit, coding);
  return withBody(`HTTP/1.1 ${res.status} ${res.reason}\r\n${fields}${tail}`, body, bodyStart, bodyEnd);
}

/**
 * The route has response filters (or its body is compressed with `coding`): the same steps as
 * handler.ts on a Headers object, serialised.
 */
function filteredFields(
  res: ResponseHead,
  serverHeader: string,
  filters: readonly ResponseFilter[],
  edit: ResponseHeaderEdit | undefined,
  coding?: ContentCoding,
): string {
  const { names, values } = res;
  const named = res.connection;
  const h = new Headers();
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (!HOP.has(name) && !named.includes(name)) h.append(name, values[i] as string);
  }
  if (coding !== undefined) editEncodedFields(h, coding);
  if (!h.has("server")) h.set("server", serverHeader);
  if (!h.has("date")) h.set("date", httpDate());
  for (const f of filters) f(NO_REQUEST, h);
  if (edit !== undefined) applyEdit(h, edit);
  // The body is passed on as the upstream framed it (or compressed, then chunked): its Content-Length
  // cannot be edited in or away.
  h.delete("content-length");
  if (res.bodyKind === RES_LENGTH && coding === undefined) h.set("content-length", String(res.contentLength));
  return serialiseHeaders(h);
}

/** `head` (latin1) then `body`, in one buffer. */
function withBody(head: string, body: Buffer | undefined, bodyStart: number, bodyEnd: number): Buffer {
  const out = Buffer.allocUnsafe(head.length + (bodyEnd - bodyStart));
  out.write(head, 0, "latin1");
  if (body !== undefined) copyBytes(body, bodyStart, bodyEnd, out, head.length);
  return out;
}

/** Field lines of a Headers object, Set-Cookie kept as separate lines. */
export function serialiseHeaders(h: Headers): string {
  let out = "";
  for (const [name, value] of h) if (name !== "set-cookie") out += `${name}: ${value}\r\n`;
  for (const c of h.getSetCookie()) out += `set-cookie: ${c}\r\n`;
  return out;
}

/**
 * A complete answer of our own (errors), with the bodies of responses.ts (the operator's for the code
 * when configured, error-pages/own-bodies.ts, else plain text); `filters` are the route's response
 * filters, which handler.ts also runs on the errors it makes.
 */
export function generatedResponse(
  status: number,
  serverHeader: string,
  close: boolean,
  filters: readonly ResponseFilter[] = [],
  edit?: ResponseHeaderEdit,
): Buffer {
  const own = ownErrorBody(status);
  if (own === undefined && filters.length === 0 && edit === undefined) {
    const body = STATUS_TEXT[status] ?? `${reasonPhrase(status)}\n`;
    return Buffer.from(
      `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
        `server: ${serverHeader}\r\ndate: ${httpDate()}\r\ncontent-length: ${body.length}\r\n` +
        `${close ? "connection: close\r\n" : ""}\r\n${body}`,
      "latin1",
    );
  }
  // The operator's body (UTF-8 bytes) or our text, with the route's filters and the guards' edit.
  const bytes = own?.bytes ?? Buffer.from(STATUS_TEXT[status] ?? `${reasonPhrase(status)}\n`, "latin1");
  const h = new Headers({
    "content-type": own?.contentType ?? "text/plain; charset=utf-8",
    server: serverHeader,
  });
  for (const f of filters) f(NO_REQUEST, h);
  if (edit !== undefined) applyEdit(h, edit);
  h.set("content-length", String(bytes.length));
  if (close) h.set("connection", "close");
  if (!h.has("date")) h.set("date", httpDate());
  return withBody(
    `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n${serialiseHeaders(h)}\r\n`,
    bytes,
    0,
    bytes.length,
  );
}

/** generatedResponse to a request with `method`: a HEAD gets the head alone (its length says the GET's). */
export function generatedAnswer(
  method: string,
  status: number,
  serverHeader: string,
  close: boolean,
  filters: readonly ResponseFilter[] = [],
  edit?: ResponseHeaderEdit,
): Buffer {
  const res = generatedResponse(status, serverHeader, close, filters, edit);
  return method === "HEAD" ? res.subarray(0, res.indexOf("\r\n\r\n") + 4) : res;
}

export function reasonPhrase(status: number): string {
  // Node's table of RFC 9110 reason phrases: the gateway's own answers (401, 403, 413, 429, …) said
  // "Unknown" with a short table of our own.
  return STATUS_CODES[status] ?? "Unknown";
}

let dateSecond = 0;
let dateText = "";

/** The IMF-fixdate of now, formatted at most once a second. */
export function httpDate(): string {
  const now = Date.now();
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
