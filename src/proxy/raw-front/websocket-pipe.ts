/**
 * WebSocket upgrades the raw front serves itself (on a route `isFastRoute` accepts): the client's
 * handshake goes to the backend as any request does (the upstream connection is never pooled again
 * once upgraded), with the fields the fast path builds plus `Connection: Upgrade` and
 * `Upgrade: websocket`. The backend's answer comes back: a 101 with the route's response filters
 * applied, after which both directions are a byte pipe (upstream/exchange.ts's tunnel, with its
 * backpressure), or any other status relayed as a normal response (a backend's 403 reaches the client
 * as is, where the Bun front answers 502: a written exception, docs/http.md; nginx does the same). The
 * client's key, subprotocols and extensions are negotiated with the backend end to end. A pipe with no
 * byte either way for the route's read timeout is closed (fast-exchange.ts, as nginx's proxy_read_timeout);
 * Bun.serve pings idle ones itself instead.
 *
 * A draining listener closes these pipes as the Bun front closes its WebSockets: a close frame (1001)
 * to the client. The backend's frames are followed (header lengths only, FrameBoundaries) so the frame
 * goes in between two of them; the client's answering close reaches the backend, which then closes.
 */
import { MAX_RESPONSE_HEAD_BYTES } from "../../model/http-syntax.ts";
import type { ResponseFilter } from "../filters/filter-types.ts";
import { HOP_BY_HOP } from "../request/hop-by-hop.ts";
import type { ClientSide } from "./client-side.ts";
import type { ResponseHeaderEdit } from "./http1/head-to-client.ts";
import { serialiseHeaders } from "./http1/head-to-client.ts";
import type { UpstreamRequest } from "./http1/head-to-upstream.ts";
import { BODY_NONE, findHeadEnd, type RequestHead } from "./http1/request-head.ts";
import { parseResponseHead, type ResponseHead } from "./http1/response-head.ts";
import { scratch } from "./outbox.ts";

const HOP: ReadonlySet<string> = new Set(HOP_BY_HOP);

/** A placeholder for the filters' Request: the response filter kinds the fast path runs never read it. */
const NO_REQUEST = new Request("http://fast-path.invalid/");

const UPGRADE_LINES = "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n";

/** How long a drained pipe waits for the close handshake to end before both connections are cut. */
export const CLOSE_GRACE_MS = 3000;

/** Close frame, server to client (unmasked): 1001 "going away", as Bun's `ws.close(1001, …)` sends. */
export const GOING_AWAY_FRAME: Buffer = (() => {
  const reason = Buffer.from("listener closing");
  return Buffer.concat([Buffer.from([0x88, 2 + reason.length, 0x03, 0xe9]), reason]);
})();

/**
 * A WebSocket handshake (RFC 6455 §4.1) the fast path pipes: an HTTP/1.1 GET with no body asking for
 * `websocket`, with a key and version 13. Anything else with an Upgrade goes to the app, which answers
 * as the Bun front does (400 for a handshake without a key).
 */
export function isPipedUpgrade(head: RequestHead): boolean {
  if (head.method !== "GET" || head.http10 || head.bodyKind !== BODY_NONE) return false;
  if (!head.upgrade?.toLowerCase().includes("websocket")) return false;
  let key = false;
  let version = false;
  for (let i = 0; i < head.fieldCount; i++) {
    if (head.nameIs(i, "sec-websocket-key")) key = head.value(i) !== "";
    else if (head.nameIs(i, "sec-websocket-version")) version = head.value(i).trim() === "13";
  }
  return key && version;
}

/** `req`'s head with the upgrade fields added (hop-by-hop, so the fast path's builders left them out). */
export function withUpgrade(req: UpstreamRequest): UpstreamRequest {
  const h = req.head;
  if (typeof h === "string") return { head: h.slice(0, -2) + UPGRADE_LINES, requestId: req.requestId };
  // A scratch head is copied out at once: the next head built anywhere overwrites it.
  const bytes = typeof h === "number" ? scratch().subarray(0, h) : h;
  const out = Buffer.allocUnsafe(bytes.length - 2 + UPGRADE_LINES.length);
  out.set(bytes.subarray(0, bytes.length - 2), 0);
  out.write(UPGRADE_LINES, bytes.length - 2, "latin1");
  return { head: out, requestId: req.requestId };
}

/**
 * The 101 passed on to the client: the backend's fields minus this hop's (as for any response), `Server`
 * when missing, the route's response filters and the guards' edit (as the Bun front's 101 gets them),
 * then the upgrade fields.
 */
export function switchingHead(
  res: ResponseHead,
  serverHeader: string,
  filters: readonly ResponseFilter[],
  edit: ResponseHeaderEdit | undefined,
): Buffer {
  const { names, values } = res;
  const h = new Headers();
  let upgrade = "websocket";
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (name === "upgrade") upgrade = values[i] as string;
    else if (!HOP.has(name) && !res.connection.includes(name)) h.append(name, values[i] as string);
  }
  if (!h.has("server")) h.set("server", serverHeader);
  for (const f of filters) f(NO_REQUEST, h);
  if (edit !== undefined) {
    for (const [name, value] of edit.append) h.append(name, value);
    for (const [name, value] of edit.set) h.set(name, value);
  }
  h.delete("content-length");
  const head = `HTTP/1.1 101 ${res.reason}\r\n${serialiseHeaders(h)}Connection: Upgrade\r\nUpgrade: ${upgrade}\r\n\r\n`;
  return Buffer.from(head, "latin1");
}

/**
 * Where WebSocket frames start and end in a byte stream (RFC 6455 §5.2), read from their headers alone:
 * payloads are skipped, never looked at.
 */
export class FrameBoundaries {
  /** Payload bytes of the current frame still to come. */
  private need = 0;
  private readonly header = Buffer.alloc(14);
  /** Header bytes of the next frame seen so far. */
  private have = 0;

  /** Between two frames now. */
  get atBoundary(): boolean {
    return this.need === 0 && this.have === 0;
  }

  /**
   * Follows `buf[start, end)`. With `stop`, stops at the first boundary and returns its offset (bytes
   * from there are not followed); -1 when the range holds none. Without: follows it all, returns -1.
   */
  feed(buf: Uint8Array, start: number, end: number, stop: boolean): number {
    let i = start;
    while (i < end) {
      if (this.need > 0) {
        const n = Math.min(this.need, end - i);
        this.need -= n;
        i += n;
        continue;
      }
      if (stop && this.have === 0) return i;
      this.header[this.have++] = buf[i++] as number;
      if (this.have >= 2 && this.have === headerSize(this.header)) {
        this.need = payloadSize(this.header);
        this.have = 0;
      }
    }
    return stop && this.atBoundary ? end : -1;
  }
}

/** A frame header's length from its first two bytes: 2, the extended length, the masking key. */
function headerSize(h: Buffer): number {
  const len7 = (h[1] as number) & 0x7f;
  const ext = len7 === 126 ? 2 : len7 === 127 ? 8 : 0;
  return 2 + ext + ((h[1] as number) & 0x80 ? 4 : 0);
}

function payloadSize(h: Buffer): number {
  const len7 = (h[1] as number) & 0x7f;
  if (len7 === 126) return h.readUInt16BE(2);
  if (len7 === 127) return Number(h.readBigUInt64BE(2));
  return len7;
}

type Pass = (chunk: Buffer) => void;

const CLOSE_NONE = 0;
const CLOSE_WANTED = 1;
const CLOSE_SENT = 2;

/**
 * The upstream side of a piped upgrade, between the upstream connection and the exchange (`pass` is
 * UpstreamExchange's own handling of upstream bytes): the backend's 101 head is replaced by
 * `switching`'s before the exchange sees it (its tunnel then writes that one), 1xx answers before it
 * are dropped (as the exchange drops them), and once switched the frames are followed for `drain`.
 */
export class UpgradePipe {
  private pending: Buffer | undefined;
  /** Any other answer than a 101: passed on as it comes. */
  private passing = false;
  /** Set once the 101 went to the client. */
  private frames: FrameBoundaries | undefined;
  private closing = CLOSE_NONE;
  private drainWanted = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: ClientSide,
    private readonly switching: (res: ResponseHead) => Buffer,
  ) {}

  /** Bytes from the upstream; what is passed on goes to `pass`. */
  data(chunk: Buffer, pass: Pass): void {
    if (this.frames !== undefined) this.piped(this.frames, chunk, pass);
    else if (this.passing) pass(chunk);
    else this.answer(this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]), pass);
  }

  /** The listener is stopping: the client is sent a 1001 close between two of the backend's frames. */
  drain(): void {
    this.drainWanted = true;
    if (this.frames === undefined || this.closing !== CLOSE_NONE) return;
    this.closing = CLOSE_WANTED;
    if (this.frames.atBoundary) this.sendClose();
    // A client that never answers the close (or a backend that never ends its frame) is cut.
    this.timer = setTimeout(() => this.client.socket.terminate(), CLOSE_GRACE_MS);
  }

  /** The exchange ended. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private answer(buf: Buffer, pass: Pass): void {
    this.pending = undefined;
    let from = 0;
    for (;;) {
      const end = findHeadEnd(buf, from, buf.length);
      if (end < 0) {
        // Past the limit the exchange refuses it (502).
        if (buf.length - from > MAX_RESPONSE_HEAD_BYTES) break;
        this.pending = buf.subarray(from);
        return;
      }
      const res = parseResponseHead(buf, from, end, false);
      if (res === undefined || res.status >= 200) break;
      if (res.status === 101) {
        const frames = new FrameBoundaries();
        frames.feed(buf, end, buf.length, false);
        this.frames = frames;
        pass(Buffer.concat([this.switching(res), buf.subarray(end)]));
        if (this.drainWanted) this.drain();
        return;
      }
      // 100 and 103: not passed on (the exchange would drop them too).
      from = end;
    }
    this.passing = true;
    pass(from === 0 ? buf : buf.subarray(from));
  }

  private piped(frames: FrameBoundaries, chunk: Buffer, pass: Pass): void {
    // Our close went out: what the backend sends after it is dropped (RFC 6455 §5.5.1: no data after Close).
    if (this.closing === CLOSE_SENT) return;
    const at = frames.feed(chunk, 0, chunk.length, this.closing === CLOSE_WANTED);
    if (at < 0) {
      pass(chunk);
      return;
    }
    if (at > 0) pass(chunk.subarray(0, at));
    this.sendClose();
  }

  private sendClose(): void {
    this.closing = CLOSE_SENT;
    this.client.write(GOING_AWAY_FRAME);
  }
}
