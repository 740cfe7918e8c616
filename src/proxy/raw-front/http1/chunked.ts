/**
 * Incremental `Transfer-Encoding: chunked` decoder (RFC 9112 §7.1). It finds exactly where a chunked
 * body ends — the point request smuggling attacks — and hands out the payload ranges for re-framing.
 * Strict: CRLF only, hex sizes of at most 12 digits (256 TiB, so no overflow), extensions without
 * CTLs, trailer lines checked like header lines and bounded in size. Payload bytes are never copied.
 * `writeChunk` frames a payload again for the upstream.
 */
import { hexValue } from "./chars.ts";

const SIZE = 0;
const EXT = 1;
const SIZE_LF = 2;
const DATA = 3;
const DATA_CR = 4;
const DATA_LF = 5;
const TRAILER_START = 6;
const TRAILER = 7;
const TRAILER_LF = 8;
const END_LF = 9;
const DONE = 10;

const MAX_SIZE_DIGITS = 12;
/** Bytes of extensions on one size line, and of all trailer lines together. */
const MAX_META_BYTES = 16 * 1024;

const CRLF = Buffer.from("\r\n");
/** The end of a chunked body without trailers. */
export const LAST_CHUNK = Buffer.from("0\r\n\r\n");

/** Writes `buf[start, end)` as one chunk; false when `out` is backlogged (its last write's answer). */
export function writeChunk(
  out: { write(data: Uint8Array): boolean },
  buf: Buffer,
  start: number,
  end: number,
): boolean {
  out.write(Buffer.from(`${(end - start).toString(16)}\r\n`, "latin1"));
  out.write(buf.subarray(start, end));
  return out.write(CRLF);
}

/** Receives payload bytes `buf[start, end)`. */
export type PayloadSink = (buf: Buffer, start: number, end: number) => void;

export class ChunkedDecoder {
  private state = SIZE;
  private size = 0;
  private digits = 0;
  private meta = 0;
  private trailer = 0;

  get done(): boolean {
    return this.state === DONE;
  }

  /**
   * Consumes `buf[start, end)`. Returns the index just after the body's last byte once it is complete,
   * `end` when every byte was consumed and more are needed, or -1 when the framing is invalid.
   */
  feed(buf: Buffer, start: number, end: number, onPayload: PayloadSink | undefined): number {
    let i = start;
    while (i < end) {
      const s = this.state;
      if (s === DATA) {
        const n = Math.min(this.size, end - i);
        if (onPayload !== undefined) onPayload(buf, i, i + n);
        i += n;
        this.size -= n;
        if (this.size === 0) this.state = DATA_CR;
        continue;
      }
      const c = buf[i++] as number;
      switch (s) {
        case SIZE: {
          const v = hexValue(c);
          if (v >= 0) {
            if (++this.digits > MAX_SIZE_DIGITS) return -1;
            this.size = this.size * 16 + v;
          } else if (this.digits === 0) return -1;
          else if (c === 13) this.state = SIZE_LF;
          else if (c === 59 || c === 32 || c === 9) this.state = EXT;
          else return -1;
          break;
        }
        case EXT:
          if (c === 13) this.state = SIZE_LF;
          else if ((c < 0x20 && c !== 9) || c === 0x7f || ++this.meta > MAX_META_BYTES) return -1;
          break;
        case SIZE_LF:
          if (c !== 10) return -1;
          this.state = this.size === 0 ? TRAILER_START : DATA;
          this.digits = 0;
          this.meta = 0;
          break;
        case DATA_CR:
          if (c !== 13) return -1;
          this.state = DATA_LF;
          break;
        case DATA_LF:
          if (c !== 10) return -1;
          this.state = SIZE;
          break;
        case TRAILER_START:
          if (c === 13) this.state = END_LF;
          else if (c === 32 || c === 9 || c < 0x20 || c === 0x7f) return -1;
          else this.state = TRAILER;
          if (++this.trailer > MAX_META_BYTES) return -1;
          break;
        case TRAILER:
          if (c === 13) this.state = TRAILER_LF;
          else if ((c < 0x20 && c !== 9) || c === 0x7f) return -1;
          if (++this.trailer > MAX_META_BYTES) return -1;
          break;
        case TRAILER_LF:
          if (c !== 10) return -1;
          this.state = TRAILER_START;
          break;
        case END_LF:
          if (c !== 10) return -1;
          this.state = DONE;
          return i;
        default:
          return -1;
      }
    }
    return i;
  }
}
