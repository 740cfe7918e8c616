/**
 * GCRA (generic cell rate algorithm) for one bucket, as pure arithmetic on milliseconds. A bucket is
 * one number, its theoretical arrival time (TAT): the moment it would be empty again. A request moves
 * TAT forward by the emission interval T; it is admitted while TAT stays within `burst × T` of now.
 * The Lua script (redis-script.ts) does the same arithmetic on Redis `TIME`; keep the two in step.
 */
import type { ItemResult } from "./limiter.ts";

/** Floating-point slack, so `burst` requests of interval T fit exactly (100 × 0.1 ms ≠ 10 ms in floats). */
const slackMs = 0.001;

export interface GcraStep {
  readonly admitted: boolean;
  /** The bucket's TAT if this request is counted. */
  readonly newTat: number;
  readonly result: ItemResult;
}

/** One bucket's verdict at `now`; `tat` undefined means an idle (full) bucket. Does not count anything. */
export function gcraStep(tat: number | undefined, now: number, intervalMs: number, burst: number): GcraStep {
  const tau = intervalMs * burst;
  const base = tat === undefined || tat < now ? now : tat;
  const newTat = base + intervalMs;
  const ahead = newTat - now;
  if (ahead > tau + slackMs) {
    return {
      admitted: false,
      newTat,
      result: { remaining: 0, resetMs: Math.ceil(base - now), retryAfterMs: Math.ceil(ahead - tau) },
    };
  }
  return {
    admitted: true,
    newTat,
    result: {
      remaining: Math.floor((tau - ahead) / intervalMs + 1e-9),
      resetMs: Math.ceil(ahead),
      retryAfterMs: 0,
    },
  };
}

/**
 * When another bucket rejected the request, a bucket that admitted it did not count it after all: one
 * more request remains and it is full one interval sooner than `gcraStep` said.
 */
export function uncounted(result: ItemResult, intervalMs: number, burst: number): ItemResult {
  if (result.retryAfterMs > 0) return result;
  return {
    remaining: Math.min(burst, result.remaining + 1),
    resetMs: Math.max(0, Math.ceil(result.resetMs - intervalMs)),
    retryAfterMs: 0,
  };
}
