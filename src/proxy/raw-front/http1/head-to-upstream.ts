/**
 * The request head sent upstream by the fast path, written as bytes with no Headers object when the
 * route has no request filters: the client's fields minus hop-by-hop ones (RFC 9110 §7.6.1, including
 * those the Connection header names) and Expect, then the X-Forwarded-* and X-Request-Id fields with
 * exactly the rules of forwarded-headers.ts (which the filtered variant calls directly), then our own
 * framing (Content-Length, or chunked when we re-chunk a chunked body).
 */

import type { RequestContext } from "../../filters/filter-types.ts";
import { RELAYED_CLIENT_HEADER } from "../../request/client-address.ts";
import { isSaneRequestId, newRequestId, prepareUpstreamHeaders } from "../../request/forwarded-headers.ts";
import { HOP_BY_HOP } from "../../request/hop-by-hop.ts";
import type { RequestTarget } from "../../request/request-target.ts";
import { type Latin1Buffer, scratch } from "../outbox.ts";
import { copyBytes } from "./chars.ts";
import { BODY_CHUNKED, BODY_LENGTH, FIELD, type RequestHead } from "./request-head.ts";

/**
 * Headers never copied from the client: hop-by-hop, framing we redo, and what we set ourselves. Every
 * one must be a name interned.ts knows (its test checks), since fields are matched by their interned name.
 */
export const DROP: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  "expect",
  "content-length",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-forwarded-host",
  "x-forwarded-port",
  "x-request-id",
  // Our internal relay header means nothing outside the front; a client's copy is never passed on.
  RELAYED_CLIENT_HEADER,
]);

/**
 * Claim headers as the byte-built upstream head applies them (made by edge-guards.ts `claimEditOf`):
 * the names to drop from the client's fields, lower-case, and the lines to add. Undefined where bytes
 * could differ from the Headers path (`ClaimSteps.request`), which then runs as before: a name the
 * gateway itself sets or drops (host, hop-by-hop, X-Forwarded-*, X-Request-Id, framing), a name set
 * twice, or a value with a byte above 0x7e (Headers decides what those become).
 */
export interface ClaimEdit {
  readonly remove: readonly string[];
  readonly lines: string;
}

export interface Hop {
  /** The connection's peer, "" when unknown (forwarded-headers.ts HopInfo). */
  readonly peer: string;
  /** The peer is a trusted proxy: the X-Forwarded-For it sent is kept. */
  readonly peerTrusted: boolean;
  readonly scheme: "http" | "https";
  readonly port: number;
}

export interface UpstreamRequest {
  /**
   * The head: latin1 text (one character a byte; Outbox.writeLatin1 encodes it with no Buffer made), its
   * bytes, or, built in the Outbox scratch buffer, its length there (for Outbox.writeScratch), as
   * head-to-client.ts passedOnHead answers.
   */
  readonly head: string | Uint8Array | number;
  readonly requestId: string;
}

/**
 * The route has no request filters: the client's fields are copied in their order and spelling. Kept
 * lines are copied as they came (one copy for each run of consecutive kept lines; the parser has
 * checked every byte of them), then our fields. Built as bytes in the Outbox scratch buffer: no string is
 * made for the head at all (it used to be a string of ~10 pieces a request; bench/ab.ts measured the
 * change). A head that might not fit there gets a buffer of its own.
 */
export function plainUpstreamHead(
  head: RequestHead,
  target: RequestTarget,
  hop: Hop,
  endpointHost: string,
  /** The edge guards' claim headers: client fields of these names dropped, these lines added. */
  edit?: ClaimEdit,
): UpstreamRequest {
  // A bound, not the size: every kept line, X-Forwarded-For and X-Request-Id value comes from `buf`,
  // each joined value at most doubles (", " between values of fields at least two bytes long).
  const bound =
    2 * head.buf.length +
    target.path.length +
    target.query.length +
    endpointHost.length +
    hop.peer.length +
    (head.host?.length ?? 0) +
    (edit?.lines.length ?? 0) +
    512;
  const sc = scratch();
  const out = bound <= sc.length ? sc : (Buffer.allocUnsafe(bound) as Latin1Buffer);
  const { buf, spans, known } = head;
  let at = out.latin1Write(head.method, 0);
  out[at++] = 32;
  at += out.latin1Write(target.path, at);
  if (target.query.length > 0) at += out.latin1Write(target.query, at);
  at += out.latin1Write(" HTTP/1.1\r\n", at);
  let xff: string | null = null;
  let requestId: string | null = null;
  const named = head.connection;
  let hostSent = false;
  // Several Host lines, or an absolute-form target's authority: one Host line with the value routing saw.
  const replaceHost = head.hostFields > 1 || head.hostFromTarget;
  // The run of kept lines not yet copied: buf[runStart, runEnd).
  let runStart = 0;
  let runEnd = 0;
  for (let i = 0; i < known.length; i++) {
    const name = known[i];
    const f = i * FIELD;
    let keep = true;
    if (name === "host") {
      // One Host line with the (joined) value routing saw, never two an upstream could choose from; a
      // single Host line is that already. The Host line stays even when Connection names it.
      if (replaceHost) {
        keep = false;
        if (!hostSent) {
          at = copyBytes(buf, runStart, runEnd, out, at);
          runEnd = runStart;
          at += out.latin1Write(`${head.rawName(i)}: ${head.host}\r\n`, at);
        }
        hostSent = true;
      }
    } else if (name !== undefined && DROP.has(name)) {
      keep = false;
      if (name === "x-forwarded-for") xff = xff === null ? head.value(i) : `${xff}, ${head.value(i)}`;
      else if (name === "x-request-id")
        requestId = requestId === null ? head.value(i) : `${requestId}, ${head.value(i)}`;
    } else if (edit !== undefined && namedIn(head, i, edit.remove)) keep = false;
    else if (named.length > 0 && named.includes(name ?? head.lowerName(i))) keep = false;
    const lineStart = spans[f] as number;
    if (keep) {
      if (runEnd !== lineStart) {
        at = copyBytes(buf, runStart, runEnd, out, at);
        runStart = lineStart;
      }
      runEnd = (spans[f + 4] as number) + 2;
    }
  }
  at = copyBytes(buf, runStart, runEnd, out, at);
  if (edit !== undefined) at += out.latin1Write(edit.lines, at);
  if (head.host === null) at = line(out, at, "Host: ", endpointHost);
  else if (!hostSent && replaceHost) at = line(out, at, "Host: ", head.host);
  // The peer, after the chain only a trusted proxy's is kept (forwarded-headers.ts).
  if (hop.peerTrusted && xff !== null && xff !== "") {
    at += out.latin1Write("X-Forwarded-For: ", at);
    at += out.latin1Write(xff, at);
    at += out.latin1Write(", ", at);
    at += out.latin1Write(hop.peer, at);
    at = crlf(out, at);
  } else if (hop.peer !== "") at = line(out, at, "X-Forwarded-For: ", hop.peer);
  at = line(out, at, "X-Forwarded-Proto: ", hop.scheme);
  if (head.host !== null) at = line(out, at, "X-Forwarded-Host: ", head.host);
  at = line(out, at, "X-Forwarded-Port: ", portText(hop.port));
  if (requestId === null || !isSaneRequestId(requestId)) requestId = newRequestId();
  at = line(out, at, "X-Request-Id: ", requestId);
  at += out.latin1Write(framing(head), at);
  const length = crlf(out, at);
  return { head: out === sc ? length : out.subarray(0, length), requestId };
}

/** Field `i`'s name is one of `lower` (lower-case names), compared as bytes. */
function namedIn(head: RequestHead, i: number, lower: readonly string[]): boolean {
  for (const n of lower) if (head.nameIs(i, n)) return true;
  return false;
}

/** `name` (with its ": ") and `value` as one field line at `at`; returns the end. */
function line(out: Latin1Buffer, at: number, name: string, value: string): number {
  const n = at + out.latin1Write(name, at);
  return crlf(out, n + out.latin1Write(value, n));
}

function crlf(out: Uint8Array, at: number): number {
  out[at] = 13;
  out[at + 1] = 10;
  return at + 2;
}

/** The listener's port as text, kept: it is the same on every request of a listener. */
let lastPort = -1;
let lastPortText = "";
function portText(port: number): string {
  if (port !== lastPort) {
    lastPort = port;
    lastPortText = String(port);
  }
  return lastPortText;
}

/**
 * A placeholder for RequestContext.req: of the filter kinds the fast path runs only CORS reads it, and
 * as a GET it passes on (dispatch.ts answered the preflights it would answer: fixed-answer.ts).
 */
const NO_REQUEST = new Request("http://fast-path.invalid/");

/** The route has request filters: the same steps as handler.ts on a Headers object, then serialised. */
export function filteredUpstreamHead(
  head: RequestHead,
  target: RequestTarget,
  hop: Hop,
  endpointHost: string,
  prefix: string,
  filters: readonly ((ctx: RequestContext) => Response | undefined)[],
): UpstreamRequest {
  const h = new Headers();
  for (let i = 0; i < head.names.length; i++) h.append(head.names[i] as string, head.values[i] as string);
  const requestId = prepareUpstreamHeaders(h, { ...hop, host: head.host });
  h.delete(RELAYED_CLIENT_HEADER);
  const ctx: RequestContext = {
    req: NO_REQUEST,
    headers: h,
    path: target.path,
    query: target.query,
    host: head.host,
    prefix,
    timeoutMs: 0,
    upstream: "",
    body: undefined,
    observer: undefined,
  };
  for (const f of filters) f(ctx);
  let out = `${head.method} ${ctx.path}${ctx.query} HTTP/1.1\r\nHost: ${ctx.host ?? endpointHost}\r\n`;
  for (const [name, value] of h) {
    if (name === "host" || name === "content-length" || name === "transfer-encoding") continue;
    out += `${name}: ${value}\r\n`;
  }
  out += `${framing(head)}\r\n`;
  return { head: out, requestId };
}

/** Our own framing of the body (never the client's fields, so it matches what we send exactly). */
export function framing(head: RequestHead): string {
  if (head.bodyKind === BODY_LENGTH) return `Content-Length: ${head.contentLength}\r\n`;
  if (head.bodyKind === BODY_CHUNKED) return "Transfer-Encoding: chunked\r\n";
  return head.sentLength ? "Content-Length: 0\r\n" : "";
}
