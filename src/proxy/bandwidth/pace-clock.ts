/**
 * When the bytes of one paced response may go out (nginx `limit_rate` after `limit_rate_after`): by `t` ms
 * after the clock started, at most `fullSpeedBytes + bytesPerSecond × t / 1000` body bytes. Both fronts
 * pace with it (paced-writer.ts for the raw front's relay, paced-stream.ts for a Response body); the model
 * type is in model/route-limits.ts. A paced response waits on a timer for its next slice, never in a loop.
 */
import type { ResponseBandwidth } from "../../model/index.ts";

/**
 * Wake-ups per second while a response is held back: each releases about 1/20 of a second's bytes. nginx's
 * clock counts whole seconds, so it sends a second's worth at a time; smaller slices keep the pace even
 * without costing more than 20 timers a second per paced response.
 */
const SLICES_PER_SECOND = 20;

export class PaceClock {
  private readonly startedAt = performance.now();
  /** Body bytes passed on so far. */
  sent = 0;
  /** The bytes one wake-up waits for. */
  readonly slice: number;

  constructor(private readonly bandwidth: ResponseBandwidth) {
    this.slice = Math.max(1, Math.ceil(bandwidth.bytesPerSecond / SLICES_PER_SECOND));
  }

  /** How many more bytes may go out at `now` (performance.now()); 0 or less: none yet. */
  allowance(now: number): number {
    const b = this.bandwidth;
    // The epsilon keeps float rounding from leaving a byte short at the instant waitMs named.
    return (
      Math.floor(b.fullSpeedBytes + (b.bytesPerSecond * (now - this.startedAt)) / 1000 + 1e-6) - this.sent
    );
  }

  /** Ms from `now` until `bytes` more may go out (at least 1). */
  waitMs(bytes: number, now: number): number {
    const b = this.bandwidth;
    const due = this.startedAt + ((this.sent + bytes - b.fullSpeedBytes) * 1000) / b.bytesPerSecond;
    return Math.max(1, Math.ceil(due - now));
  }

  /** Ms from `now` until the next slice of `held` bytes may go out. */
  nextSliceMs(held: number, now: number): number {
    return this.waitMs(Math.min(held, this.slice), now);
  }
}
