/**
 * Pipes an upstream response body to the client in the framing it came in (Content-Length stays,
 * chunked stays chunked; for HTTP/1.0 clients chunked is decoded and the connection closes), tracking
 * where it ends so the upstream connection can be reused exactly then. Bytes beyond the end mean the
 * upstream cannot be trusted with another request. A client that cannot keep up pauses the upstream.
 * A compressed response (`encodeWith`) is decoded from its framing, compressed read by read and sent
 * chunked (close-delimited to an HTTP/1.0 client): one write per upstream read, the last chunk once the
 * upstream's body is complete.
 */

import type { ResponseBandwidth } from "../../../model/index.ts";
import { PacedWriter, type PaceOwner } from "../../bandwidth/paced-writer.ts";
import type { ResponseEncoder } from "../../compression/encoder.ts";
import type { ClientSide } from "../client-side.ts";
import { ChunkedDecoder } from "../http1/chunked.ts";
import type { passedOnHead } from "../http1/head-to-client.ts";
import { RES_CHUNKED, RES_CLOSE, RES_LENGTH, RES_NONE, type ResponseHead } from "../http1/response-head.ts";

const TUNNEL = 4;

/** Builds the head passed on to the client (head-to-client.ts `passedOnHead`'s signature). */
export type ClientHead = typeof passedOnHead;

/** The exchange a relay works for (an object, not closures: nothing allocated per response for it). */
export interface RelayOwner extends PaceOwner {
  /**
   * The response head followed by `body[start, end)` (no body: undefined): bytes, or their length in
   * the Outbox scratch buffer (head-to-client.ts passedOnHead).
   */
  responseHead(body: Buffer | undefined, start: number, end: number): Uint8Array | number;
  /** The client cannot keep up: stop reading the upstream until it drains. */
  pauseUpstream(): void;
}

export class ResponseRelay {
  complete = false;
  failed = false;
  reusable: boolean;
  /** Paces the body on a route with a response bandwidth (bandwidth/paced-writer.ts); else undefined. */
  readonly pacer: PacedWriter | undefined;
  private left: number;
  private readonly decoder: ChunkedDecoder | undefined;
  /** The owner's response head is not written yet: it goes out in one write with the first body bytes. */
  private holding = false;
  /** Compresses the body (compression/encoder.ts); undefined: passed on as it comes. */
  private encoder: ResponseEncoder | undefined;
  /** Builds the client's head instead of passedOnHead (response-coding.ts: compressed, or gaining Vary). */
  clientHead: ClientHead | undefined;
  /** The compressed body is framed in chunks (an HTTP/1.1 client). */
  private chunkedEncoded = false;

  constructor(
    private readonly conn: ClientSide,
    res: ResponseHead | undefined,
    /** The body goes out in the upstream's own framing (chunked stays chunked). */
    readonly passFraming: boolean,
    readonly closeClient: boolean,
    private readonly owner: RelayOwner,
    /** The route's response bandwidth (nginx `limit_rate`): the body is paced to it. */
    bandwidth: ResponseBandwidth | undefined,
    readonly kind: number = res?.bodyKind ?? RES_NONE,
  ) {
    this.reusable = res?.reusable ?? false;
    this.left = res?.contentLength ?? 0;
    this.decoder = kind === RES_CHUNKED ? new ChunkedDecoder() : undefined;
    if (kind === RES_NONE) this.complete = true;
    this.pacer =
      bandwidth === undefined || kind === RES_NONE ? undefined : new PacedWriter(conn, owner, bandwidth);
  }

  /** A 101 answer: from now on every byte is passed on, in both directions, until one side closes. */
  static tunnel(conn: ClientSide, owner: RelayOwner): ResponseRelay {
    return new ResponseRelay(conn, undefined, true, true, owner, undefined, TUNNEL);
  }

  get tunnel(): boolean {
    return this.kind === TUNNEL;
  }

  /** Holds the owner's head until the first body bytes (each socket write is a syscall: one, not two). */
  holdHead(): void {
    this.holding = true;
  }

  /** Writes a held head that no body bytes came with. */
  flushHead(): void {
    if (!this.holding) return;
    this.holding = false;
    if (!this.writeHead(this.owner.responseHead(undefined, 0, 0))) this.owner.pauseUpstream();
  }

  private writeHead(head: Uint8Array | number): boolean {
    return typeof head === "number" ? this.conn.writeScratch(head) : this.conn.write(head);
  }

  /** The body goes out compressed by `encoder` (before any byte is fed); `chunked` for HTTP/1.1 clients. */
  encodeWith(encoder: ResponseEncoder, chunked: boolean): void {
    this.encoder = encoder;
    this.chunkedEncoded = chunked;
  }

  get encoded(): boolean {
    return this.encoder !== undefined;
  }

  /**
   * The upstream closed: whether the response ended in order (complete, close-delimited or a tunnel;
   * else the client must see a cut). A compressed close-delimited body gets its last bytes now.
   */
  upstreamClosed(): boolean {
    if (this.encoder !== undefined && this.kind === RES_CLOSE && !this.failed) this.sendEncoded(true);
    return !this.failed && (this.complete || this.kind === RES_CLOSE || this.kind === TUNNEL);
  }

  /** The response is over, whatever its state: a coder still held goes back. */
  discard(): void {
    this.encoder?.release();
  }

  feed(buf: Buffer, start: number, end: number): void {
    if (this.complete && this.kind !== TUNNEL) {
      // More than the framing announced: never reuse this connection.
      this.reusable = false;
      return;
    }
    if (this.encoder !== undefined) {
      this.feedEncoded(this.encoder, buf, start, end);
      return;
    }
    switch (this.kind) {
      case RES_LENGTH: {
        const n = Math.min(this.left, end - start);
        this.send(buf, start, start + n);
        this.left -= n;
        if (this.left === 0) this.complete = true;
        if (end - start > n) this.reusable = false;
        return;
      }
      case RES_CHUNKED: {
        const d = this.decoder as ChunkedDecoder;
        const at = d.feed(buf, start, end, this.passFraming ? undefined : (b, s, e) => this.send(b, s, e));
        if (at < 0) {
          this.failed = true;
          return;
        }
        if (this.passFraming) this.send(buf, start, d.done ? at : end);
        if (d.done) {
          this.complete = true;
          if (at < end) this.reusable = false;
        }
        return;
      }
      default:
        // RES_CLOSE and tunnels: everything until the upstream closes.
        this.send(buf, start, end);
    }
  }

  /** `feed` for a compressed body: the payload goes to the encoder, what it made to the client. */
  private feedEncoded(encoder: ResponseEncoder, buf: Buffer, start: number, end: number): void {
    switch (this.kind) {
      case RES_LENGTH: {
        const n = Math.min(this.left, end - start);
        encoder.push(buf.subarray(start, start + n));
        this.left -= n;
        if (this.left === 0) this.complete = true;
        if (end - start > n) this.reusable = false;
        break;
      }
      case RES_CHUNKED: {
        const d = this.decoder as ChunkedDecoder;
        const at = d.feed(buf, start, end, (b, s, e) => encoder.push(b.subarray(s, e)));
        if (at < 0) {
          this.failed = true;
          return;
        }
        if (d.done) {
          this.complete = true;
          if (at < end) this.reusable = false;
        }
        break;
      }
      default:
        encoder.push(buf.subarray(start, end));
    }
    this.sendEncoded(this.complete);
  }

  private sendEncoded(last: boolean): void {
    const encoder = this.encoder as ResponseEncoder;
    const out = encoder.take(last, this.chunkedEncoded);
    if (encoder.failed) this.failed = true;
    else if (out !== undefined) this.send(out, 0, out.length);
  }

  /**
   * Passes on `buf[start, end)`: with the held head when it is still held (no view of the range made).
   * A paced body goes through its pacer, the head alone before it (the pace counts body bytes only).
   */
  private send(buf: Buffer, start: number, end: number): void {
    if (end === start) return;
    let ok: boolean;
    const pacer = this.pacer;
    if (pacer !== undefined) {
      if (this.holding) {
        this.holding = false;
        this.writeHead(this.owner.responseHead(undefined, 0, 0));
      }
      ok = pacer.write(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
    } else if (this.holding) {
      this.holding = false;
      ok = this.writeHead(this.owner.responseHead(buf, start, end));
    } else ok = this.conn.write(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
    if (!ok) this.owner.pauseUpstream();
  }
}

export { RES_CLOSE };
