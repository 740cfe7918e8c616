/**
 * A passthrough connection whose SNI no TLSRoute takes, handed to the HTTPS listener that shares the port
 * (`--enable-ssl-passthrough`, as ingress-nginx's flag): the ClientHello already read is replayed first,
 * then every client byte follows, and what the TLS server writes goes back to the client with
 * backpressure both ways (the client socket pauses while the stream is full; a write completes once the
 * socket took it). The client's address rides on the stream, from the accepted socket.
 */
import { Duplex } from "node:stream";

/** Where a handed connection goes: the HTTPS listener's TLS server (raw-front/front.ts `acceptShared`). */
export type TerminationHandoff = (stream: HandedClient) => void;

/** What the stream needs of the client socket. */
export interface HandedSocket {
  write(data: Uint8Array): number;
  end(): void;
  pause(): void;
  resume(): void;
  readonly remoteAddress: string;
  readonly remotePort: number;
}

export class HandedClient extends Duplex {
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly remoteFamily: string;
  private queued: Uint8Array | undefined;
  private pendingWrite: ((err?: Error | null) => void) | undefined;

  constructor(private readonly socket: HandedSocket) {
    super();
    this.remoteAddress = socket.remoteAddress;
    this.remotePort = socket.remotePort;
    this.remoteFamily = socket.remoteAddress.includes(":") ? "IPv6" : "IPv4";
  }

  /** Client bytes (the replayed ClientHello first). Bun may reuse its read buffer: they are copied. */
  fromClient(chunk: Uint8Array): void {
    if (this.destroyed) return;
    if (!this.push(Buffer.from(chunk))) this.socket.pause();
  }

  /** The client socket can take more: write what waits and complete the pending write. */
  drained(): void {
    const rest = this.queued;
    if (rest === undefined) return;
    const n = this.socket.write(rest);
    if (n < 0) {
      this.destroy();
      return;
    }
    if (n < rest.length) {
      this.queued = rest.subarray(n);
      return;
    }
    this.queued = undefined;
    const done = this.pendingWrite;
    this.pendingWrite = undefined;
    done?.();
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    const n = this.socket.write(chunk);
    if (n < 0) {
      done(new Error("client connection closed"));
      return;
    }
    if (n === chunk.length) {
      done();
      return;
    }
    // Bun's write takes what the kernel does: the rest waits for `drain`, and so does the stream.
    this.queued = chunk.subarray(n);
    this.pendingWrite = done;
  }

  override _final(done: (err?: Error | null) => void): void {
    this.socket.end();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.pendingWrite = undefined;
    this.queued = undefined;
    this.socket.end();
    done(err);
  }
}
