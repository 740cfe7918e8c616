/**
 * Writes to a Bun socket without losing bytes. Bun's `socket.write` is unbuffered: it returns how many
 * bytes the kernel took and drops the rest (measured: 3.9 MB of a 64 MB write, then 0). The rest is kept
 * here and written on `drain`; callers see `backlogged` and stop reading their source (`pause()`) until
 * `onFlushed` runs, so memory stays bounded by about one read chunk per direction.
 * Before `attach` (an upstream still connecting) everything is queued.
 */
/** Where an Outbox writes: a Bun socket, or anything that takes bytes the same way (FrontSocket). */
export interface ByteSink {
  /** Writes what it can of `data[byteOffset, byteOffset + byteLength)` now; returns that count, -1 when closed. */
  write(data: Uint8Array, byteOffset?: number, byteLength?: number): number;
}

/**
 * Encoding room for writeLatin1; larger texts (never a head within the parser's limits) get their own.
 * `latin1Write` is Buffer's own encoder (Node and Bun have it; @types omit it): 21 ns against 39 ns for
 * `write(text, 0, "latin1")` on a 200-byte head here.
 */
const SCRATCH = Buffer.allocUnsafe(96 * 1024) as Latin1Buffer;

/** A Buffer as Bun and Node have it at run time, with their latin1 encoder (@types omit it). */
export type Latin1Buffer = Buffer & { latin1Write(text: string, offset: number): number };

/**
 * The shared scratch buffer a head is built in (head-to-upstream.ts) and then written from by `writeScratch`:
 * nothing that could build another head may run in between.
 */
export function scratch(): Latin1Buffer {
  return SCRATCH;
}

export class Outbox {
  private socket: ByteSink | undefined;
  private readonly queue: Uint8Array[] = [];
  private queued = 0;
  private closed = false;
  /** Called once the queue has been written out after having been backlogged. */
  onFlushed: (() => void) | undefined;

  constructor(socket?: ByteSink) {
    this.socket = socket;
  }

  get backlogged(): boolean {
    return this.queued > 0;
  }

  get queuedBytes(): number {
    return this.queued;
  }

  attach(socket: ByteSink): void {
    this.socket = socket;
    this.flush();
  }

  /** Queues or writes `data`; returns false when some of it is waiting for `drain`. */
  write(data: Uint8Array): boolean {
    if (this.closed || data.length === 0) return !this.closed;
    const s = this.socket;
    if (this.queued > 0 || s === undefined) {
      this.queue.push(data);
      this.queued += data.length;
      return false;
    }
    const n = s.write(data);
    if (n === data.length) return true;
    if (n < 0) {
      this.closed = true;
      return false;
    }
    const rest = data.subarray(n);
    this.queue.push(rest);
    this.queued += rest.length;
    return false;
  }

  /**
   * `write` for latin1 text (one character a byte, as the request heads are built). When it can go out
   * now it is encoded into a scratch buffer shared by every Outbox and written from there: the socket
   * takes what it can synchronously, and only a remainder is copied for the queue. Measured in process:
   * 25 ns to encode against 117 ns for Buffer.from, and no Buffer per request for the collector.
   */
  writeLatin1(text: string): boolean {
    if (text.length > SCRATCH.length) return this.write(Buffer.from(text, "latin1"));
    if (text.length === 0) return !this.closed;
    return this.writeScratch(SCRATCH.latin1Write(text, 0));
  }

  /**
   * Writes `scratch()[0, length)`, which the caller has just filled: the socket takes what it can now,
   * and only what it leaves (or all of it, before the socket is attached or behind a queue) is copied,
   * since the scratch buffer is overwritten by the next head built.
   */
  writeScratch(length: number): boolean {
    const s = this.socket;
    if (this.closed || this.queued > 0 || s === undefined)
      return this.write(Buffer.from(SCRATCH.subarray(0, length)));
    const n = s.write(SCRATCH, 0, length);
    if (n === length) return true;
    if (n < 0) {
      this.closed = true;
      return false;
    }
    const rest = Buffer.from(SCRATCH.subarray(n, length));
    this.queue.push(rest);
    this.queued += rest.length;
    return false;
  }

  /** Writes what is queued (call from the socket's `drain`). Returns true when nothing is left. */
  flush(): boolean {
    const s = this.socket;
    if (s === undefined || this.closed) return false;
    while (this.queue.length > 0) {
      const head = this.queue[0] as Uint8Array;
      const n = s.write(head);
      if (n < 0) {
        this.closed = true;
        return false;
      }
      this.queued -= Math.max(0, n);
      if (n < head.length) {
        this.queue[0] = head.subarray(n);
        return false;
      }
      this.queue.shift();
    }
    const cb = this.onFlushed;
    if (cb !== undefined) cb();
    return true;
  }

  /** Drops whatever is queued (the socket is going away). */
  discard(): void {
    this.closed = true;
    this.queue.length = 0;
    this.queued = 0;
  }
}
