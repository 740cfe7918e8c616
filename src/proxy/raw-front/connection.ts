/**
 * One client connection of the raw-socket front: a small state machine. HEAD reads and parses a request
 * head; BODY passes the request body (exactly framed by Content-Length or the chunked decoder) to the
 * exchange serving it; WAIT holds until that exchange has written its response. Pipelined requests are
 * served one after another: the next head is parsed only once the current response is complete, and
 * reading stops while more than PIPELINE_LIMIT bytes are buffered. Reading also stops while the
 * upstream cannot take the body as fast as the client sends it (backpressure both ways). A response
 * that starts before its request body was read completely closes the connection afterwards: the rest
 * of that body is never read as a next request. TUNNEL (after a 101) passes bytes through unparsed.
 * A body with a Content-Length up to `requestBufferBytes` and the listener's smallest route body limit (no
 * `Expect: 100-continue`) is read whole before dispatch (nginx's `proxy_request_buffering`): a slow sender
 * holds no upstream connection. A client reading a body may stay silent `clientBodyTimeoutSeconds` (up to
 * a timer step more) between reads, not while we hold it back for a backlogged upstream; then it is dropped.
 * A connection whose first bytes are the HTTP/2 preface becomes a tunnel into an HTTP/2 session (`h2c`).
 */
import { MAX_REQUEST_LINE } from "../../model/http-syntax.ts";
import { type ListenerState, SOCKET_TIMER_STEP_S } from "../settings.ts";
import { type ClientOrigin, listenerOrigin } from "./client-origin.ts";
import type { ClientSide, Exchange, FrontSocket, TlsSession } from "./client-side.ts";
import { dispatch } from "./dispatch.ts";
import { ChunkedDecoder } from "./http1/chunked.ts";
import { generatedResponse } from "./http1/head-to-client.ts";
import { matchPreface, PREFACE_SO_FAR, PREFACE_WHOLE } from "./http1/preface.ts";
import {
  BODY_CHUNKED,
  BODY_LENGTH,
  findHeadEnd,
  hasVersion,
  parseRequestHead,
  type RequestHead,
} from "./http1/request-head.ts";
import { Outbox } from "./outbox.ts";

const HEAD = 0;
const BODY = 1;
const WAIT = 2;
const TUNNEL = 3;
const CLOSED = 4;

const PIPELINE_LIMIT = 64 * 1024;

const CONTINUE = Buffer.from("HTTP/1.1 100 Continue\r\n\r\n");

export class ClientConnection implements ClientSide {
  readonly out: Outbox;
  readonly origin: ClientOrigin;
  private state = HEAD;
  private buf: Buffer | undefined;
  private start = 0;
  private end = 0;
  private scanFrom = 0;
  private exchange: Exchange | undefined;
  private bodyLeft = 0;
  private decoder: ChunkedDecoder | undefined;
  private processing = false;
  private pausedBy = 0;
  /** Set when the connection must close once the current response is written. */
  private closeAfter = false;
  private tunnel: ((buf: Buffer) => void) | undefined;
  private tunnelIdleS = 0;
  /** The listener is stopping: close after the current response instead of reading another. */
  private draining = false;
  /** No request head has been read yet: the bytes may be the HTTP/2 preface. */
  private fresh = true;
  /** The current request expects `100 Continue` before it sends its body, and has not had it. */
  private continuePending = false;
  /** A request whose body is being read whole before it is dispatched. */
  private deferred: RequestHead | undefined;

  constructor(
    readonly socket: FrontSocket,
    readonly state0: ListenerState,
    /** Where the slow path sends requests: the listener's internal Bun.serve (`unix:/path`). */
    readonly internalEndpoint: string,
    /** Takes the connection over when it opens with the HTTP/2 preface; absent: HTTP/1.1 only. */
    private readonly h2c?: (conn: ClientConnection) => void,
    /** Set on HTTPS listeners. */
    readonly tls: TlsSession | undefined = undefined,
  ) {
    this.out = new Outbox(socket);
    this.origin = listenerOrigin(socket, state0);
    this.out.onFlushed = () => this.exchange?.clientDrained();
  }

  get clientIp(): string {
    return this.origin.client;
  }

  /** Closed, or closing once queued bytes are out: nothing more can be written. */
  get closed(): boolean {
    return this.state === CLOSED;
  }

  /** A request is being read or answered (a tunnel is not a request any more). */
  get serving(): boolean {
    return this.state === BODY || this.state === WAIT;
  }

  onData(chunk: Buffer): void {
    if (this.state === TUNNEL) {
      if (this.tunnelIdleS > 0) this.socket.timeout(this.tunnelIdleS);
      this.tunnel?.(chunk);
      return;
    }
    if (this.state === CLOSED) return;
    if (this.state === BODY) this.bodyClock();
    if (this.buf === undefined || this.start === this.end) {
      this.buf = chunk;
      this.start = 0;
      this.end = chunk.length;
      this.scanFrom = 0;
    } else this.append(chunk);
    this.process();
  }

  /** Graceful stop: an idle connection closes now, a busy one after its response (its exchange is told). */
  drain(): void {
    this.draining = true;
    if (this.state === HEAD) this.closeWhenFlushed();
    else this.exchange?.drain?.();
  }

  /**
   * Bytes the client sent, as passed on to `pipe` once the connection became a tunnel. `idleS`: no byte
   * either way for that long drops it (a piped WebSocket: the route's read timeout, as nginx's
   * proxy_read_timeout); 0: the upgraded protocol's own rules (the app's WebSocket pings, HTTP/2's).
   */
  becomeTunnel(pipe: (buf: Buffer) => void, idleS = 0): void {
    this.state = TUNNEL;
    this.tunnelIdleS = idleS;
    this.socket.timeout(idleS);
    this.tunnel = pipe;
    if (this.buf !== undefined && this.end > this.start) pipe(this.buf.subarray(this.start, this.end));
    this.buf = undefined;
    this.start = this.end = 0;
  }

  /** From here on the connection is HTTP/2: `link` gets every byte and learns of drain and close. */
  handOver(link: Exchange & { data(buf: Buffer): void }): void {
    this.exchange = link;
    this.becomeTunnel((buf) => link.data(buf));
  }

  write(bytes: Uint8Array): boolean {
    if (this.state === CLOSED) return false;
    // A client that stops reading a response is dropped after the idle time, as Bun.serve does.
    this.socket.timeout(this.state === TUNNEL ? this.tunnelIdleS : this.state0.settings.idleTimeoutSeconds);
    return this.out.write(bytes);
  }

  /** `write` for `length` bytes just built in the Outbox scratch buffer (Outbox.writeScratch). */
  writeScratch(length: number): boolean {
    if (this.state === CLOSED) return false;
    this.socket.timeout(this.state === TUNNEL ? this.tunnelIdleS : this.state0.settings.idleTimeoutSeconds);
    return this.out.writeScratch(length);
  }

  /** The current response is complete; `close` when the connection cannot carry another. */
  responseDone(close: boolean): void {
    if (this.state === CLOSED) return;
    this.exchange = undefined;
    if (close || this.closeAfter || this.state === BODY || this.draining) {
      this.closeWhenFlushed();
      return;
    }
    this.state = HEAD;
    this.resume(3);
    if (!this.processing) this.process();
  }

  /** Ends the connection once queued bytes are out. */
  closeWhenFlushed(): void {
    if (this.state === CLOSED) return;
    this.state = CLOSED;
    this.exchange = undefined;
    if (!this.out.backlogged) this.socket.end();
    else this.out.onFlushed = () => this.socket.end();
  }

  bodyWanted(): void {
    if (!this.continuePending) return;
    this.continuePending = false;
    if (this.state === BODY) this.write(CONTINUE);
  }

  /** Answers `status` and closes (malformed request, or no exchange could start). */
  fail(status: number): void {
    if (this.state === CLOSED) return;
    this.write(generatedResponse(status, this.state0.settings.serverHeader, true));
    this.closeWhenFlushed();
  }

  onDrain(): void {
    if (this.state === TUNNEL && this.tunnelIdleS > 0) this.socket.timeout(this.tunnelIdleS); // bytes moved
    this.out.flush();
  }

  onClose(): void {
    const ex = this.exchange;
    this.state = CLOSED;
    this.exchange = undefined;
    this.out.discard();
    ex?.abort();
  }

  /** Stops reading for `reason` (a bit: 1 = the body's destination is backlogged, 2 = pipelining). */
  pause(reason: number): void {
    if (this.pausedBy === 0) {
      this.socket.pause();
      // Held back by us: the client's silence is not its fault.
      if (this.state === BODY) this.socket.timeout(0);
    }
    this.pausedBy |= reason;
  }

  resume(reason: number): void {
    if (this.pausedBy === 0) return;
    this.pausedBy &= ~reason;
    if (this.pausedBy === 0) {
      this.socket.resume();
      this.bodyClock();
    }
  }

  /** The timer ran out: a body read whole (none sent upstream) is 408 as on the full path; else dropped. */
  onTimeout(): void {
    if (this.state === BODY && this.deferred !== undefined) this.fail(408);
    else this.socket.terminate();
  }

  /** Reading a body the client is free to send: it may not stay silent longer than the body timeout. */
  private bodyClock(): void {
    if (this.state === BODY && this.pausedBy === 0)
      this.socket.timeout(this.state0.settings.clientBodyTimeoutSeconds + SOCKET_TIMER_STEP_S);
  }

  private append(chunk: Buffer): void {
    const buf = this.buf as Buffer;
    const have = this.end - this.start;
    if (this.end + chunk.length <= buf.length && buf !== chunk) {
      chunk.copy(buf, this.end);
      this.end += chunk.length;
      return;
    }
    const next = Buffer.allocUnsafe(Math.max(16 * 1024, 2 * (have + chunk.length)));
    buf.copy(next, 0, this.start, this.end);
    chunk.copy(next, have);
    this.scanFrom -= this.start;
    this.buf = next;
    this.start = 0;
    this.end = have + chunk.length;
  }

  private process(): void {
    this.processing = true;
    try {
      while (this.state !== CLOSED && this.end > this.start) {
        if (this.state === HEAD) {
          if (!this.readHead()) break;
        } else if (this.state === BODY) {
          // A buffered body: dispatched once all of it is here.
          if (this.deferred !== undefined && !this.dispatchWhole()) break;
          this.readBody();
        } else {
          if (this.end - this.start > PIPELINE_LIMIT) this.pause(2);
          break;
        }
      }
    } finally {
      this.processing = false;
    }
    if (this.state === HEAD && this.end === this.start)
      this.socket.timeout(this.state0.settings.idleTimeoutSeconds);
  }

  /** Returns false when more bytes are needed. */
  private readHead(): boolean {
    const buf = this.buf as Buffer;
    if (this.fresh) {
      const preface = matchPreface(buf, this.start, this.end);
      if (preface === PREFACE_SO_FAR) return false;
      this.fresh = false;
      if (preface === PREFACE_WHOLE && this.h2c !== undefined) {
        this.h2c(this);
        return false;
      }
    }
    // RFC 9112 §2.2: empty lines before a request-line are ignored (a client may end a body with CRLF).
    let s = this.start;
    while (s + 1 < this.end && buf[s] === 13 && buf[s + 1] === 10) s += 2;
    if (s !== this.start) {
      this.start = s;
      if (s === this.end) return false;
    }
    const headEnd = findHeadEnd(buf, Math.max(this.start, this.scanFrom), this.end);
    if (headEnd < 0) {
      const have = this.end - this.start;
      const lineEnd = buf.indexOf(10, this.start);
      if (have > this.state0.settings.headLimits.bytes) this.fail(431);
      else if (lineEnd < 0 || lineEnd >= this.end) {
        if (have > MAX_REQUEST_LINE) this.fail(414);
      } else if (!hasVersion(buf, this.start, lineEnd)) {
        // HTTP/0.9 (`GET /`, no version, no headers) has no head end to wait for: 400 at once, as nginx.
        this.fail(400);
        return false;
      }
      this.scanFrom = Math.max(this.start, this.end - 2);
      return false;
    }
    const { underscoresInHeaders, headLimits } = this.state0.settings;
    const head = parseRequestHead(buf, this.start, headEnd, underscoresInHeaders, headLimits);
    this.start = headEnd;
    this.scanFrom = headEnd;
    if (typeof head === "number") {
      this.fail(head);
      return false;
    }
    this.startRequest(head);
    return true;
  }

  private startRequest(head: RequestHead): void {
    this.origin.request(head);
    if (!head.keepAlive) this.closeAfter = true;
    if (head.bodyKind === BODY_LENGTH) {
      this.bodyLeft = head.contentLength;
      this.decoder = undefined;
      this.state = BODY;
    } else if (head.bodyKind === BODY_CHUNKED) {
      this.decoder = new ChunkedDecoder();
      this.state = BODY;
    } else this.state = WAIT;
    // `Expect: 100-continue` is answered here once the body is wanted (`bodyWanted`); the upstream never
    // sees it. An HTTP/1.0 client cannot be sent a 1xx (RFC 9110 §15.2).
    this.continuePending = head.expectContinue && this.state === BODY && !head.http10;
    if (this.state === BODY) this.bodyClock();
    else this.socket.timeout(0);
    const limit = Math.min(this.state0.settings.requestBufferBytes, this.state0.table.smallestBodyMax);
    if (head.bodyKind === BODY_LENGTH && head.contentLength <= limit && !head.expectContinue) {
      this.deferred = head;
      return;
    }
    const ex = dispatch(this, head);
    if (this.state === CLOSED) return;
    this.exchange = ex;
    if (ex !== undefined && this.state === WAIT) ex.bodyEnd();
  }

  private readBody(): void {
    const buf = this.buf as Buffer;
    const ex = this.exchange;
    if (this.decoder === undefined) {
      const n = Math.min(this.bodyLeft, this.end - this.start);
      ex?.body(buf, this.start, this.start + n);
      this.start += n;
      this.bodyLeft -= n;
      if (this.bodyLeft === 0) this.bodyDone();
      return;
    }
    const at = this.decoder.feed(
      buf,
      this.start,
      this.end,
      ex === undefined ? undefined : (b, s, e) => ex.body(b, s, e),
    );
    if (at < 0) {
      // Malformed framing: the request boundary is unknown, so the connection cannot continue.
      this.closeAfter = true;
      if (ex !== undefined) {
        this.exchange = undefined;
        ex.abort();
      }
      this.fail(400);
      return;
    }
    this.start = at;
    // Not once answered meanwhile (a body past the route's limit): the connection stays closed.
    if (this.decoder.done && this.state !== CLOSED) this.bodyDone();
  }

  /** Dispatches the deferred request once its whole body is buffered; false while more is needed. */
  private dispatchWhole(): boolean {
    if (this.end - this.start < this.bodyLeft) return false;
    const head = this.deferred as RequestHead;
    this.deferred = undefined;
    const ex = dispatch(this, head);
    if (this.state === CLOSED) return false;
    this.exchange = ex;
    return true;
  }

  private bodyDone(): void {
    this.socket.timeout(0);
    this.state = WAIT;
    this.scanFrom = this.start;
    this.exchange?.bodyEnd();
  }
}
