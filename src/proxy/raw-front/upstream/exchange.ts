/**
 * One request relayed over a pooled upstream connection with no Request/Response objects: the head
 * written as bytes, the body streamed (Content-Length as is, chunked re-framed from the decoded payload),
 * the response head parsed, edited and written, the response body piped in its own framing, parsed only
 * to find its end. The connection goes back to the pool only when the response was read completely, the
 * request body was all sent, and both sides agreed on keep-alive. Subclasses say where the request goes,
 * in TLS or not, and what its head is: FastExchange (a route's backend) and RelayedExchange (the internal
 * Bun.serve listener). Limits, retries, connection caps: exchange-limits.ts; a pooled connection closed
 * before any response byte is retried once on a fresh one when sending lost nothing (idempotent, no body).
 */
import { MAX_RESPONSE_HEAD_BYTES } from "../../../model/http-syntax.ts";
import type { ResponseBandwidth } from "../../../model/index.ts";
import type { CompiledBackendTLS } from "../../backend-tls/options.ts";
import type { CompiledCompression } from "../../compression/response-rules.ts";
import type { ResponseFilter } from "../../filters/filter-types.ts";
import type { ClientSide, Exchange } from "../client-side.ts";
import { LAST_CHUNK, writeChunk } from "../http1/chunked.ts";
import { generatedAnswer, passedOnHead, type ResponseHeaderEdit } from "../http1/head-to-client.ts";
import type { UpstreamRequest } from "../http1/head-to-upstream.ts";
import { BODY_CHUNKED, BODY_NONE, findHeadEnd, type RequestHead } from "../http1/request-head.ts";
import { parseResponseHead, RES_LENGTH, type ResponseHead } from "../http1/response-head.ts";
import { ClockedExchange } from "./exchange-clock.ts";
import { type ExchangeLimits, IDEMPOTENT, UNSAFE_MAX_IDLE_MS } from "./exchange-limits.ts";
import { ConnectTimeout, type UpstreamConn, type UpstreamHandler, upstreamPool } from "./pool.ts";
import { type RelayOwner, ResponseRelay } from "./relay.ts";
import { clientRelay } from "./response-coding.ts";

export abstract class UpstreamExchange
  extends ClockedExchange
  implements Exchange, UpstreamHandler, RelayOwner
{
  private upstream: UpstreamConn | undefined;
  private attempt = 0;
  private gotBytes = false;
  private sentBody = false;
  private bodyDone = false;
  private finished = false;
  private staleRetried = false;
  private pending: Buffer | undefined;
  private relay: ResponseRelay | undefined;
  /** The backend's response compression (FastExchange sets it); undefined: bodies pass as they come. */
  protected compression: CompiledCompression | undefined;
  private res: ResponseHead | undefined; // The upstream's response head, once it arrives.
  protected requestId = "";
  protected tunnelIdleSeconds = 0; // an upgraded connection with no byte either way this long is cut (0: never)

  constructor(
    protected readonly conn: ClientSide,
    protected readonly head: RequestHead,
    limits: ExchangeLimits,
    private readonly responseFilters: readonly ResponseFilter[],
    /** The edge guards' response fields, added after the filters (fast-exchange.ts). */
    protected readonly responseEdit?: ResponseHeaderEdit,
    /** The route's response bandwidth (nginx `limit_rate`): the body is paced to it. */
    private readonly bandwidth?: ResponseBandwidth,
  ) {
    super(limits);
  }

  /** The endpoint of the next attempt (`http://ip:port` or `unix:/path`). */
  protected abstract pickEndpoint(): string;
  /** TLS to the endpoint (a TLS backend), or none. */
  protected abstract upstreamTLS(): CompiledBackendTLS | undefined;
  /** The request head for `endpoint`. */
  protected abstract requestHead(endpoint: string): UpstreamRequest;
  /** The response head went to the client (or an error of ours did): tell observability. */
  protected abstract observe(status: number, bytes: number): void;
  /** Response headers (with `status`) arrived from the upstream. */
  protected abstract headersArrived(status: number): void;
  /** An attempt failed (`error` says how); log it as forward.ts does. */
  protected abstract attemptFailed(timedOut: boolean, attempt: number, error: string): void;
  /** The exchange ended, whatever way (answered, failed, cut, aborted); called once. */
  protected released(): void {}
  /** A connection cap of the backend refused a new connection (pool.ts): answer 503. */
  protected abstract overCap(): void;

  /** Sends the first attempt; subclasses call it once their fields are set. */
  protected start(): void {
    this.send(false);
    this.conn.bodyWanted(); // the request is on its way: a client waiting to send its body may now send it
  }

  body(buf: Buffer, start: number, end: number): void {
    const up = this.upstream;
    if (this.finished || up === undefined || end === start) return;
    this.sentBody = true;
    const ok =
      this.head.bodyKind === BODY_CHUNKED
        ? writeChunk(up.out, buf, start, end)
        : up.out.write(buf.subarray(start, end));
    if (!ok) this.upstreamBehind();
  }

  bodyEnd(): void {
    this.bodyDone = true;
    if (this.head.bodyKind === BODY_CHUNKED && !this.finished) this.upstream?.out.write(LAST_CHUNK);
    if (this.relay?.complete) this.finish();
  }

  clientDrained(): void {
    // Paced bytes waiting for their time keep the upstream paused; the pacer calls this once they are out.
    if (this.relay?.pacer?.holding) return;
    this.upstream?.socket?.resume();
    const relay = this.relay;
    if (relay !== undefined && !relay.tunnel && !relay.complete && !this.finished) this.startReadClock();
  }

  abort(): void {
    this.relay?.pacer?.stop();
    if (this.finished) return;
    this.ended();
    this.stopClock();
    this.upstream?.destroy();
    this.upstream = undefined;
  }

  onOpen(conn: UpstreamConn): void {
    this.upstream = conn;
    if (conn.out.backlogged) this.sendBlocked(); // queued while connecting, not yet taken: the send clock starts
  }

  onDrain(conn: UpstreamConn): void {
    if (conn !== this.upstream) return;
    this.sendUnblocked();
    this.conn.resume(1);
  }

  /** The upstream is not taking what the client sends: hold the client back, and count how long. */
  private upstreamBehind(): void {
    this.conn.pause(1);
    // While connecting everything is queued; as nginx's, the send clock starts once connected (onOpen).
    if (this.upstream?.socket !== undefined) this.sendBlocked();
  }

  /** No request byte taken by the upstream for `sendGapMs` (nginx `proxy_send_timeout`). */
  sendStalled(): void {
    if (this.finished) return;
    this.attemptFailed(true, this.attempt, `upstream took no request bytes for ${this.limits.sendGapMs} ms`);
    this.cutRequest(504);
  }

  /** The request cannot go on: upstream dropped; `status` before the response (body unsent: the
   * connection closes), a cut after. Also for a body past the route's limit (413). */
  protected cutRequest(status: number): void {
    if (this.finished) return;
    this.stopClock();
    this.upstream?.destroy();
    this.upstream = undefined;
    if (this.relay === undefined) this.fail(status);
    else {
      this.ended();
      this.conn.socket.terminate();
    }
  }

  private ended(): void {
    this.finished = true;
    this.relay?.discard();
    this.sendUnblocked();
    this.released();
  }

  onData(conn: UpstreamConn, chunk: Buffer): void {
    if (conn !== this.upstream || this.finished) return;
    this.gotBytes = true;
    const relay = this.relay;
    if (relay !== undefined) {
      this.touchReadClock();
      relay.feed(chunk, 0, chunk.length);
      if (relay.failed) this.brokenResponse();
      else if (relay.complete && this.bodyDone) this.finish();
      return;
    }
    let buf = chunk;
    if (this.pending !== undefined) buf = Buffer.concat([this.pending, chunk]);
    this.readResponseHead(buf, 0);
  }

  onClose(conn: UpstreamConn, error: Error | undefined): void {
    if (conn !== this.upstream || this.finished) return;
    this.upstream = undefined;
    this.stopClock();
    const relay = this.relay;
    if (relay !== undefined) {
      // A finish() the pacer defers stays so: the client connection stays reusable. A close-delimited
      // body, or a complete one with the request body unsent, ends here; others were cut: no orderly end.
      if (relay.complete && this.bodyDone && relay.pacer?.holding) return;
      const orderly = relay.upstreamClosed();
      this.ended();
      if (!orderly) this.conn.socket.terminate();
      else if (!relay.pacer?.deferred(() => this.conn.responseDone(true))) this.conn.responseDone(true);
      return;
    }
    if (
      conn.reused &&
      !this.gotBytes &&
      !this.sentBody &&
      this.head.bodyKind === BODY_NONE &&
      !this.staleRetried &&
      IDEMPOTENT.has(this.head.method)
    ) {
      this.staleRetried = true;
      this.send(true);
      return;
    }
    // A connect past `connectMs` is a failed connection too (retried alike), answered 504 as nginx does.
    const timedOut = error instanceof ConnectTimeout;
    this.attemptFailed(timedOut, this.attempt, String(error ?? "connection closed before a response"));
    if (this.canRetry()) this.retryAfterBackoff();
    else this.fail(timedOut ? 504 : 502);
  }

  private send(fresh: boolean): void {
    if (!fresh) this.attempt++;
    const ms = Math.min(this.limits.attemptMs, this.limits.deadline - performance.now());
    if (ms <= 0) {
      this.fail(504);
      return;
    }
    const endpoint = this.pickEndpoint();
    this.pending = undefined;
    this.gotBytes = false;
    this.sendUnblocked();
    const req = this.requestHead(endpoint);
    this.requestId = req.requestId;
    const retriable = this.head.bodyKind === BODY_NONE && IDEMPOTENT.has(this.head.method);
    const maxIdle = retriable ? undefined : UNSAFE_MAX_IDLE_MS;
    const tls = this.upstreamTLS();
    const caps = this.limits.connectionCaps;
    const up = upstreamPool.acquire(endpoint, this, fresh, maxIdle, this.limits.connectMs, tls, caps);
    if (up === undefined) return void this.overCap();
    this.upstream = up;
    // A head built in the scratch buffer goes out before anything else can build one (acquire builds none).
    const head = req.head;
    if (typeof head === "number") up.out.writeScratch(head);
    else if (typeof head === "string") up.out.writeLatin1(head);
    else up.out.write(head);
    this.sentAt = performance.now();
    if (ms !== Number.POSITIVE_INFINITY) this.startClock(ms);
  }

  /** No body byte from the upstream for `readGapMs`: the response is cut, as nginx does. */
  protected stalled(): void {
    if (this.finished) return;
    this.attemptFailed(true, this.attempt, `no response bytes for ${this.limits.readGapMs} ms`);
    this.upstream?.destroy();
    this.upstream = undefined;
    this.ended();
    this.conn.socket.terminate();
  }

  protected timedOut(ms: number): void {
    if (this.finished || this.relay !== undefined) return;
    this.upstream?.destroy();
    this.upstream = undefined;
    this.attemptFailed(true, this.attempt, `no response headers within ${Math.round(ms)} ms`);
    if (this.limits.retryCodes.includes(504) && this.canRetry()) this.retryAfterBackoff();
    else this.fail(504);
  }

  /** Attempts are left (FastExchange asks its circuit breaker too, last, as that counts the retry). */
  protected canRetry(): boolean {
    return this.attempt < this.limits.attempts;
  }

  private retryAfterBackoff(): void {
    const ms = this.limits.backoffMs;
    if (ms > 0)
      setTimeout(() => {
        if (!this.finished) this.send(false);
      }, ms);
    else this.send(false);
  }

  private readResponseHead(buf: Buffer, from: number): void {
    const end = findHeadEnd(buf, from, buf.length);
    if (end < 0) {
      if (buf.length - from > MAX_RESPONSE_HEAD_BYTES) this.brokenResponse();
      else this.pending = from === 0 ? buf : buf.subarray(from);
      return;
    }
    this.pending = undefined;
    const res = parseResponseHead(buf, from, end, this.head.method === "HEAD");
    if (res === undefined) {
      this.brokenResponse();
      return;
    }
    if (res.status < 200) {
      if (res.status === 101 && this.head.upgrade !== null) this.startTunnel(buf, from, end);
      else if (res.status === 101) this.brokenResponse();
      // 100 and 103 are not passed on (Expect is answered by the front); the final head follows.
      else if (end < buf.length) this.readResponseHead(buf, end);
      return;
    }
    this.stopClock();
    this.headersArrived(res.status);
    if (this.limits.retryCodes.includes(res.status) && this.canRetry()) {
      this.upstream?.destroy();
      this.upstream = undefined;
      this.retryAfterBackoff();
      return;
    }
    this.startResponse(res, buf, end);
  }

  private startResponse(res: ResponseHead, buf: Buffer, bodyStart: number): void {
    this.res = res;
    const relay = clientRelay(this.conn, this.head, res, this, this.bandwidth, this.compression);
    this.relay = relay;
    relay.holdHead();
    if (bodyStart < buf.length) relay.feed(buf, bodyStart, buf.length);
    relay.flushHead();
    const length = res.bodyKind === RES_LENGTH && !relay.encoded ? res.contentLength : -1;
    this.observe(res.status, res.bodyKind === 0 ? 0 : length);
    if (relay.failed) this.brokenResponse();
    else if (relay.complete && this.bodyDone) this.finish();
    else if (!relay.complete && !this.conn.closed) this.startReadClock();
  }

  /** The head passed on to the client, with the first body bytes (RelayOwner). */
  responseHead(body: Buffer | undefined, start: number, end: number): Uint8Array | number {
    const relay = this.relay as ResponseRelay;
    return (relay.clientHead ?? passedOnHead)(
      this.res as ResponseHead,
      this.conn.state0.settings.serverHeader,
      relay.passFraming,
      relay.closeClient,
      this.head.http10,
      this.responseFilters,
      this.responseEdit,
      body,
      start,
      end,
    );
  }

  /** RelayOwner: the client cannot keep up; the upstream is not to blame meanwhile. */
  pauseUpstream(): void {
    this.upstream?.socket?.pause();
    this.stopClock();
  }

  private startTunnel(buf: Buffer, from: number, end: number): void {
    this.stopClock();
    const up = this.upstream as UpstreamConn;
    const relay = ResponseRelay.tunnel(this.conn, this);
    this.relay = relay;
    this.conn.write(buf.subarray(from, end));
    this.observe(101, -1);
    if (end < buf.length) relay.feed(buf, end, buf.length);
    this.conn.becomeTunnel((bytes) => {
      if (!up.out.write(bytes)) this.upstreamBehind();
    }, this.tunnelIdleSeconds);
  }

  /** The response is complete and so is the request body: the upstream connection can be reused. */
  private finish(): void {
    if (this.finished) return;
    // The client is owed paced bytes yet: the exchange ends once they are out.
    if (this.relay?.pacer?.deferred(() => this.finish())) return;
    this.ended();
    this.stopClock();
    const up = this.upstream;
    const relay = this.relay as ResponseRelay;
    this.upstream = undefined;
    if (up !== undefined) {
      if (relay.reusable && this.head.upgrade === null) upstreamPool.release(up);
      else up.destroy();
    }
    this.conn.responseDone(relay.closeClient);
  }

  private brokenResponse(): void {
    this.stopClock();
    this.upstream?.destroy();
    this.upstream = undefined;
    if (this.relay !== undefined) {
      // The head is out already: the client must see a cut, not an orderly end.
      this.ended();
      this.conn.socket.terminate();
      return;
    }
    // An unreadable answer is a failed attempt as on the fetch path (where fetch throws): logged, counted.
    this.attemptFailed(false, this.attempt, "malformed response head");
    this.fail(502);
  }

  protected fail(status: number, edit = this.responseEdit): void {
    if (this.finished) return;
    this.ended();
    this.stopClock();
    const settings = this.conn.state0.settings;
    const close = !this.head.keepAlive || !this.bodyDone;
    const filters = this.responseFilters;
    this.conn.write(generatedAnswer(this.head.method, status, settings.serverHeader, close, filters, edit));
    this.observe(status, -1);
    this.conn.responseDone(close);
  }
}
