import { gcraStep, uncounted } from "./gcra.ts";
import type { ItemResult, Limiter, LimitItem, LimitResult } from "./limiter.ts";

export interface LocalLimiterOptions {
  /** Clock in milliseconds; monotonic by default (tests pass their own). */
  readonly now?: () => number;
  /** Buckets kept at most; past this, idle buckets are dropped first, then (rarely) everything. */
  readonly maxBuckets?: number;
}

/**
 * The in-process store: the same GCRA and keys as Redis, counting for this process only. It is what
 * serves without `--redis-url`, and the fallback of failure mode `Local`. Memory is bounded: a bucket is
 * worth keeping only until its TAT passes (then it is full again, the same as absent).
 */
export class LocalLimiter implements Limiter {
  readonly kind = "local" as const;
  private readonly tats = new Map<string, number>();
  private readonly now: () => number;
  private readonly maxBuckets: number;
  private checks = 0;

  constructor(options: LocalLimiterOptions = {}) {
    this.now = options.now ?? (() => performance.timeOrigin + performance.now());
    this.maxBuckets = options.maxBuckets ?? 200_000;
  }

  /** Synchronous form of `check`, for callers that must not yield. */
  checkNow(items: readonly LimitItem[]): LimitResult {
    const now = this.now();
    this.checks++;
    const results: ItemResult[] = [];
    const tats: number[] = [];
    let allowed = true;
    for (const item of items) {
      const step = gcraStep(this.tats.get(item.key), now, item.intervalMs, item.burst);
      if (!step.admitted) allowed = false;
      results.push(step.result);
      tats.push(step.newTat);
    }
    if (!allowed) {
      return {
        allowed,
        items: results.map((r, i) => uncounted(r, items[i]?.intervalMs ?? 0, items[i]?.burst ?? 1)),
      };
    }
    if (this.tats.size >= this.maxBuckets) this.sweep(now);
    for (const [i, item] of items.entries()) this.tats.set(item.key, tats[i] as number);
    return { allowed, items: results };
  }

  check(items: readonly LimitItem[]): LimitResult {
    return this.checkNow(items);
  }

  replicas(): number {
    return 1;
  }

  isUp(): boolean {
    return true;
  }

  stats() {
    return { commands: this.checks, roundTrips: 0, failures: 0 };
  }

  /** Buckets held (tests and debugging). */
  size(): number {
    return this.tats.size;
  }

  async close(): Promise<void> {
    this.tats.clear();
  }

  private sweep(now: number): void {
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
    // Still full of live buckets: forgetting them all admits a little more for a moment, which beats
    // growing without bound under a flood of distinct keys.
    if (this.tats.size >= this.maxBuckets) this.tats.clear();
  }
}
