/**
 * Response heads the fast path writes to the client: an upstream response passed on (this hop's fields
 * removed, `Server` added when missing, then the route's response filters, as prepareClientResponse and
 * runResponseFilters do), and the small answers the gateway makes itself (same bodies as responses.ts).
 */
import type { ResponseFilter } from "../filters/chain.ts";
import { HOP_BY_HOP } from "../hop-by-hop.ts";
import { STATUS_TEXT } from "../responses.ts";
import { RES_CHUNKED, RES_LENGTH, type ResponseHead } from "./response-head.ts";

const HOP: ReadonlySet<string> = new Set(HOP_BY_HOP);

const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  400: "Bad Request",
  404: "Not Found",
  414: "URI Too Long",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

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

function replaced(edit: ResponseHeaderEdit | undefined, name: string): boolean {
  if (edit === undefined) return false;
  for (const [n] of edit.set) if (n === name) return true;
  return false;
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
 * @param chunkedOut the body goes out chunked (upstream chunked and the client speaks 1.1)
 * @param close the client connection closes after this response
 * @returns the head as a latin1 string (the relay writes it together with the first body bytes)
 */
export function passedOnHead(
  res: ResponseHead,
  serverHeader: string,
  chunkedOut: boolean,
  close: boolean,
  http10Client: boolean,
  filters: readonly ResponseFilter[],
  edit?: ResponseHeaderEdit,
): string {
  const { rawNames, names, values } = res;
  let out = `HTTP/1.1 ${res.status} ${res.reason}\r\n`;
  const named = res.connection;
  if (filters.length === 0) {
    let server = false;
    let date = false;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      // Content-Length frames the body we pass on as the upstream framed it: kept even when Connection
      // names it, or the client could not tell where the body ends.
      if (HOP.has(name) || replaced(edit, name)) continue;
      if (named.length > 0 && name !== "content-length" && named.includes(name)) continue;
      if (name === "server") server = true;
      else if (name === "date") date = true;
      out += `${rawNames[i]}: ${values[i]}\r\n`;
    }
    if (!server) out += `Server: ${serverHeader}\r\n`;
    // Bun.serve adds Date to every response; so does this front (RFC 9110 §6.6.1).
    if (!date) out += `Date: ${httpDate()}\r\n`;
    if (edit !== undefined) out += editLines(edit);
  } else {
    const h = new Headers();
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      if (!HOP.has(name) && !named.includes(name)) h.append(name, values[i] as string);
    }
    if (!h.has("server")) h.set("server", serverHeader);
    if (!h.has("date")) h.set("date", httpDate());
    for (const f of filters) f(NO_REQUEST, h);
    if (edit !== undefined) applyEdit(h, edit);
    // The body is passed on as the upstream framed it: its Content-Length cannot be edited away.
    h.delete("content-length");
    if (res.bodyKind === RES_LENGTH) h.set("content-length", String(res.contentLength));
    out += serialiseHeaders(h);
  }
  if (chunkedOut && res.bodyKind === RES_CHUNKED) out += "Transfer-Encoding: chunked\r\n";
  if (close) out += "Connection: close\r\n";
  else if (http10Client) out += "Connection: keep-alive\r\n";
  return `${out}\r\n`;
}

/** Field lines of a Headers object, Set-Cookie kept as separate lines. */
export function serialiseHeaders(h: Headers): string {
  let out = "";
  for (const [name, value] of h) if (name !== "set-cookie") out += `${name}: ${value}\r\n`;
  for (const c of h.getSetCookie()) out += `set-cookie: ${c}\r\n`;
  return out;
}

/**
 * A complete plain-text answer of our own (errors), with the bodies of responses.ts; `filters` are the
 * route's response filters, which handler.ts also runs on the errors it makes.
 */
export function generatedResponse(
  status: number,
  serverHeader: string,
  close: boolean,
  filters: readonly ResponseFilter[] = [],
  edit?: ResponseHeaderEdit,
): Buffer {
  const body = STATUS_TEXT[status] ?? `${reasonPhrase(status)}\n`;
  if (filters.length > 0 || edit !== undefined) {
    const h = new Headers({ "content-type": "text/plain; charset=utf-8", server: serverHeader });
    for (const f of filters) f(NO_REQUEST, h);
    if (edit !== undefined) applyEdit(h, edit);
    h.set("content-length", String(body.length));
    if (close) h.set("connection", "close");
    if (!h.has("date")) h.set("date", httpDate());
    return Buffer.from(
      `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\n${serialiseHeaders(h)}\r\n${body}`,
      "latin1",
    );
  }
  return Buffer.from(
    `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `server: ${serverHeader}\r\ndate: ${httpDate()}\r\ncontent-length: ${body.length}\r\n` +
      `${close ? "connection: close\r\n" : ""}\r\n${body}`,
    "latin1",
  );
}

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? "Unknown";
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
