/**
 * The request head sent upstream by the fast path, written as bytes with no Headers object when the
 * route has no request filters: the client's fields minus hop-by-hop ones (RFC 9110 §7.6.1, including
 * those the Connection header names) and Expect, then the X-Forwarded-* and X-Request-Id fields with
 * exactly the rules of forwarded-headers.ts (which the filtered variant calls directly), then our own
 * framing (Content-Length, or chunked when we re-chunk a chunked body).
 */

import { RELAYED_CLIENT_HEADER } from "../client-address.ts";
import type { RequestContext } from "../filters/chain.ts";
import { isSaneRequestId, newRequestId, prepareUpstreamHeaders } from "../forwarded-headers.ts";
import { HOP_BY_HOP } from "../hop-by-hop.ts";
import type { RequestTarget } from "../request-target.ts";
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

export interface Hop {
  readonly clientIp: string;
  readonly scheme: "http" | "https";
  readonly port: number;
}

export interface UpstreamRequest {
  /** The head as latin1 text (one character a byte): Outbox.writeLatin1 encodes it with no Buffer made. */
  readonly head: string;
  readonly requestId: string;
}

/**
 * The route has no request filters: the client's fields are copied in their order and spelling. Kept
 * lines are copied as they came (one slice for each run of consecutive kept lines; the parser has
 * checked every byte of them), so no string is made per field.
 */
export function plainUpstreamHead(
  head: RequestHead,
  target: RequestTarget,
  hop: Hop,
  endpointHost: string,
): UpstreamRequest {
  const { buf, spans, known } = head;
  let out = `${head.method} ${target.path}${target.query} HTTP/1.1\r\n`;
  let xff: string | null = null;
  let requestId: string | null = null;
  const named = head.connection;
  let hostSent = false;
  // The run of kept lines not yet copied: buf[runStart, runEnd).
  let runStart = 0;
  let runEnd = 0;
  for (let i = 0; i < known.length; i++) {
    const name = known[i];
    const at = i * FIELD;
    let keep = true;
    if (name === "host") {
      // One Host line with the (joined) value routing saw, never two an upstream could choose from; a
      // single Host line is that already. The Host line stays even when Connection names it.
      if (head.hostFields > 1) {
        keep = false;
        if (!hostSent) {
          out += buf.toString("latin1", runStart, runEnd);
          runEnd = runStart;
          out += `${head.rawName(i)}: ${head.host}\r\n`;
        }
        hostSent = true;
      }
    } else if (name !== undefined && DROP.has(name)) {
      keep = false;
      if (name === "x-forwarded-for") xff = xff === null ? head.value(i) : `${xff}, ${head.value(i)}`;
      else if (name === "x-request-id")
        requestId = requestId === null ? head.value(i) : `${requestId}, ${head.value(i)}`;
    } else if (named.length > 0 && named.includes(name ?? head.lowerName(i))) keep = false;
    const lineStart = spans[at] as number;
    if (keep) {
      if (runEnd !== lineStart) {
        if (runEnd > runStart) out += buf.toString("latin1", runStart, runEnd);
        runStart = lineStart;
      }
      runEnd = (spans[at + 4] as number) + 2;
    }
  }
  if (runEnd > runStart) out += buf.toString("latin1", runStart, runEnd);
  if (head.host === null) out += `Host: ${endpointHost}\r\n`;
  if (hop.clientIp !== "")
    out += `X-Forwarded-For: ${xff === null ? hop.clientIp : `${xff}, ${hop.clientIp}`}\r\n`;
  else if (xff !== null) out += `X-Forwarded-For: ${xff}\r\n`;
  out += `X-Forwarded-Proto: ${hop.scheme}\r\n`;
  if (head.host !== null) out += `X-Forwarded-Host: ${head.host}\r\n`;
  out += `X-Forwarded-Port: ${hop.port}\r\n`;
  if (requestId === null || !isSaneRequestId(requestId)) requestId = newRequestId();
  out += `X-Request-Id: ${requestId}\r\n${framing(head)}\r\n`;
  return { head: out, requestId };
}

/** A placeholder for RequestContext.req: the filter kinds the fast path runs never read it. */
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
