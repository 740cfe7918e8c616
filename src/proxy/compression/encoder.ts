/**
 * A response body compressed as it streams, synchronously: each upstream read is pushed in and what the
 * coding has produced so far is taken out, flushed (gzip's sync flush, Brotli's and zstd's flush) so the
 * client gets it now rather than when a buffer fills, and finished on the body's last read. Nothing is
 * held beyond the coder's own window and one read's output, however long the body.
 *
 * It drives the native handle of a node:zlib stream object (`_handle.writeSync` and `_writeState`, the
 * very loop node:zlib's own `*Sync` functions run) instead of the stream: the stream API is async (a
 * response would wait a tick per read and need its own backpressure), and the `*Sync` functions close
 * the handle after one call. Measured here (Bun 1.4, a 6 KB JSON body, level 1): 21 µs a response with
 * a fresh gzip stream, 14 µs with one reused after `reset()` (a fresh stream object and deflateInit cost
 * ~10 µs), so gzip and zstd coders are pooled. Brotli's `reset()` forgets the quality (a reset coder
 * took 13 ms at its default 11 for the same body), so Brotli coders are never reused. encoder.test.ts
 * pins these internals, so a Bun upgrade that changes them fails there first.
 */
import zlib from "node:zlib";
import type { ContentCoding } from "../../model/index.ts";

const C = zlib.constants;

/** The native handle's synchronous call (node:zlib's `ZlibBase` handle). */
interface NativeCoder {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number,
  ): void;
  reset(): void;
  close(): void;
}

/** A node:zlib stream object with the internals this file drives. */
interface CoderStream {
  _handle: NativeCoder | null;
  _writeState: Uint32Array;
  on(event: "error", listener: (err: unknown) => void): unknown;
}

/** The settings a coder is made with (from the compiled compression). */
export interface CoderSettings {
  readonly gzipLevel: number;
  readonly brotliQuality: number;
  readonly zstdLevel: number;
}

/** Flush flags per coding: [none, flush, finish]. */
const FLAGS: Readonly<Record<ContentCoding, readonly [number, number, number]>> = {
  gzip: [C.Z_NO_FLUSH, C.Z_SYNC_FLUSH, C.Z_FINISH],
  br: [C.BROTLI_OPERATION_PROCESS, C.BROTLI_OPERATION_FLUSH, C.BROTLI_OPERATION_FINISH],
  zstd: [C.ZSTD_e_continue, C.ZSTD_e_flush, C.ZSTD_e_end],
};

/**
 * Idle coders kept per coding and level. Each holds its state (measured RSS per live coder: gzip level 1
 * 0.26 MB, zstd level 3 0.82 MB, Brotli quality 4 0.6 MB), so a few: a body that arrives in one read
 * (most) takes its coder back before the next response needs one.
 */
const POOL_MAX = 4;
const pools = new Map<string, Coder[]>();

/** Output lands here first, then is copied once into the buffer handed to the client. */
const SCRATCH = Buffer.allocUnsafe(64 * 1024);
let scratchOwner: ResponseEncoder | undefined;
let scratchUsed = 0;
const EMPTY = Buffer.alloc(0);
const CRLF = "\r\n";
const LAST_CHUNK = "0\r\n\r\n";

class Coder {
  error: unknown;
  constructor(
    readonly key: string,
    readonly stream: CoderStream,
  ) {
    stream.on("error", (err) => {
      this.error = err;
    });
  }
  get handle(): NativeCoder {
    return this.stream._handle as NativeCoder;
  }
}

function newCoder(coding: ContentCoding, s: CoderSettings, key: string): Coder {
  let stream: unknown;
  if (coding === "gzip") stream = zlib.createGzip({ level: s.gzipLevel });
  else if (coding === "br")
    stream = zlib.createBrotliCompress({
      params: { [C.BROTLI_PARAM_QUALITY]: s.brotliQuality, [C.BROTLI_PARAM_MODE]: C.BROTLI_MODE_TEXT },
    });
  else stream = zlib.createZstdCompress({ params: { [C.ZSTD_c_compressionLevel]: s.zstdLevel } });
  return new Coder(key, stream as CoderStream);
}

function levelOf(coding: ContentCoding, s: CoderSettings): number {
  return coding === "gzip" ? s.gzipLevel : coding === "br" ? s.brotliQuality : s.zstdLevel;
}

/** One response's coder: `push` the body's bytes, `take` what is ready; `release` when done or cut. */
export class ResponseEncoder {
  private coder: Coder | undefined;
  private readonly flags: readonly [number, number, number];
  /** Output that did not fit the scratch buffer (or was there when another encoder needed it). */
  private spilled: Buffer[] = [];
  private spilledBytes = 0;
  /** Input pushed since the last take: a flush without new input is skipped. */
  private fresh = false;
  /** Set when the coder failed: the response must be cut. */
  failed = false;

  constructor(
    readonly coding: ContentCoding,
    settings: CoderSettings,
  ) {
    this.flags = FLAGS[coding];
    const key = `${coding}:${levelOf(coding, settings)}`;
    this.coder = (coding === "br" ? undefined : pools.get(key)?.pop()) ?? newCoder(coding, settings, key);
  }

  /** Feeds `data` to the coder (what it produces waits for `take`). */
  push(data: Uint8Array): void {
    if (data.length === 0 || this.coder === undefined) return;
    this.fresh = true;
    this.run(this.flags[0], data);
  }

  /**
   * What the coder produced, flushed (or finished, when `last`), as one buffer: framed as one HTTP/1.1
   * chunk when `chunked` (with the last chunk after it when `last`), else bare. Undefined when there is
   * nothing to send.
   */
  take(last: boolean, chunked: boolean): Buffer | undefined {
    if (this.coder !== undefined && (last || this.fresh)) this.run(this.flags[last ? 2 : 1], EMPTY);
    this.fresh = false;
    const used = scratchOwner === this ? scratchUsed : 0;
    const size = this.spilledBytes + used;
    if (scratchOwner === this) {
      scratchOwner = undefined;
      scratchUsed = 0;
    }
    if (last) this.release();
    if (size === 0 && !(last && chunked)) return undefined;
    const head = size > 0 && chunked ? `${size.toString(16)}${CRLF}` : "";
    const tail = chunked ? (size > 0 ? CRLF : "") + (last ? LAST_CHUNK : "") : "";
    const out = Buffer.allocUnsafe(head.length + size + tail.length);
    let o = out.write(head, 0, "latin1");
    for (const part of this.spilled) o += part.copy(out, o);
    if (used > 0) o += SCRATCH.copy(out, o, 0, used);
    out.write(tail, o, "latin1");
    this.spilled = [];
    this.spilledBytes = 0;
    return out;
  }

  /** Gives the coder back (pooled when it can be reused); safe to call more than once. */
  release(): void {
    const coder = this.coder;
    if (coder === undefined) return;
    this.coder = undefined;
    if (scratchOwner === this) {
      scratchOwner = undefined;
      scratchUsed = 0;
    }
    const handle = coder.stream._handle;
    if (handle === null) return;
    const pool = this.coding === "br" || this.failed ? undefined : (pools.get(coder.key) ?? []);
    if (pool === undefined || pool.length >= POOL_MAX) {
      handle.close();
      return;
    }
    handle.reset();
    pools.set(coder.key, pool);
    pool.push(coder);
  }

  /** The coder's loop: call until it leaves output room unused (it then took all input and flushed). */
  private run(flag: number, input: Uint8Array): void {
    const coder = this.coder as Coder;
    if (scratchOwner !== this) {
      scratchOwner?.spill();
      scratchOwner = this;
      scratchUsed = 0;
    }
    const state = coder.stream._writeState;
    const handle = coder.handle;
    let inOff = 0;
    let inLen = input.length;
    for (;;) {
      if (scratchUsed === SCRATCH.length) this.spill();
      const room = SCRATCH.length - scratchUsed;
      handle.writeSync(flag, input, inOff, inLen, SCRATCH, scratchUsed, room);
      if (coder.error !== undefined) {
        this.failed = true;
        this.release();
        return;
      }
      const availOut = state[0] as number;
      const availIn = state[1] as number;
      scratchUsed += room - availOut;
      inOff += inLen - availIn;
      inLen = availIn;
      if (availOut !== 0) return;
    }
  }

  /** Moves this encoder's bytes out of the scratch buffer (it fills, or another encoder needs it). */
  private spill(): void {
    if (scratchUsed > 0) {
      this.spilled.push(Buffer.from(SCRATCH.subarray(0, scratchUsed)));
      this.spilledBytes += scratchUsed;
    }
    scratchUsed = 0;
  }
}

/** Idle pooled coders, for tests and the debug view. */
export function pooledCoders(): number {
  let n = 0;
  for (const p of pools.values()) n += p.length;
  return n;
}
