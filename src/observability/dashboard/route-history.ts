/**
 * The last few minutes of each route's traffic, for the dashboard: request rate, 5xx ratio, p50 and p99.
 * Nothing is added to the hot path: the per-route cumulative counters the proxy already keeps for
 * Prometheus (`RouteStatsTable`) are read every `sliceMs` by a timer, and the difference from the previous
 * read is kept in a ring of `slices` slots. Only routes that had traffic in a slice take memory in it, so
 * 1,000 idle routes cost one copy of their counters (the previous read), not one per slot; and a slice
 * keeps its latency histogram only while it is one of the `recentSlices` the percentiles read (older
 * ones give the chart its counts): 10k busy routes over the default 60 slices held 600k histograms.
 */
import { latencyBuckets, type RouteStats } from "../route-stats.ts";
import type { RouteStatsReader } from "./route-totals.ts";

/** One route's traffic in one slice of time: requests, 5xx answers and the latency histogram. */
interface Slice {
  count: number;
  errors: number;
  /**
   * Per-bucket counts (not cumulative), index `latencyBuckets.length` for beyond the last bound; absent
   * once the slice is older than the recent ones.
   */
  readonly buckets?: Float64Array;
}

/** What the dashboard shows for one route: figures over the last minute, counts over the whole ring. */
export interface RouteWindow {
  readonly route: string;
  /** Requests per second over the last `recentSlices` (and the slice in progress). */
  readonly rate: number;
  /** Share of answers that were 5xx (0…1); 0 when there was no request. */
  readonly errorRatio: number;
  /** Median and 99th percentile time to response headers, in milliseconds; null without requests. */
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  /** Requests per slice, oldest first (the last entry is the slice in progress), for a small chart. */
  readonly counts: readonly number[];
  /** 5xx answers per slice, aligned with `counts`. */
  readonly errors: readonly number[];
}

interface Cumulative {
  count: number;
  errors: number;
  readonly buckets: Float64Array;
}

const nBuckets = latencyBuckets.length + 1;

export class RouteHistory {
  /** Ring of completed slices; `ring[head]` is the oldest. */
  private readonly ring: Map<string, Slice>[];
  private head = 0;
  /** Counters as last read, to take differences from. */
  private readonly previous = new Map<string, Cumulative>();
  private readonly timer: ReturnType<typeof setInterval>;
  private lastTick = performance.now();
  private readonly started = performance.now();
  /** How many of the newest completed slices the rate, ratio and percentiles are computed over. */
  readonly recentSlices: number;

  /**
   * `beforeTick` runs before each timed slice closes (the primary of `--workers` reads its workers'
   * counters then).
   */
  constructor(
    private readonly table: RouteStatsReader,
    readonly sliceMs = 5000,
    readonly slices = 60,
    beforeTick?: () => Promise<void>,
  ) {
    this.recentSlices = Math.min(slices, Math.max(1, Math.round(60_000 / sliceMs)));
    this.ring = Array.from({ length: slices }, () => new Map());
    this.snapshotInto(undefined);
    this.timer = setInterval(
      beforeTick === undefined ? () => this.tick() : () => void beforeTick().finally(() => this.tick()),
      sliceMs,
    );
    this.timer.unref?.();
  }

  /** Close the slice in progress (the timer calls this; tests call it to move time on). */
  tick(): void {
    const slot = this.ring[this.head] as Map<string, Slice>;
    slot.clear();
    this.snapshotInto(slot);
    this.head = (this.head + 1) % this.slices;
    this.lastTick = performance.now();
    // The slice that just left the recent ones: only its counts are read from now on.
    if (this.slices > this.recentSlices) {
      const older = this.ring[(this.head + this.slices - this.recentSlices - 1) % this.slices];
      for (const [route, s] of older ?? []) older?.set(route, { count: s.count, errors: s.errors });
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** The window of every route the table knows (routes removed from the configuration are gone). */
  windows(): RouteWindow[] {
    const out: RouteWindow[] = [];
    // The slice in progress is the counters read now minus the previous read (`previous` is not touched).
    for (const [route, s] of this.table.entries()) {
      const current = delta(s, this.previous.get(route));
      out.push(this.window(route, current.count > 0 ? current : undefined));
    }
    return out;
  }

  private window(route: string, current: Slice | undefined): RouteWindow {
    const counts: number[] = [];
    const errors: number[] = [];
    const buckets = new Float64Array(nBuckets);
    let total = 0;
    let failed = 0;
    const add = (s: Slice | undefined, recent: boolean) => {
      counts.push(s?.count ?? 0);
      errors.push(s?.errors ?? 0);
      if (s === undefined || !recent) return;
      total += s.count;
      failed += s.errors;
      const b = s.buckets;
      if (b !== undefined)
        for (let i = 0; i < nBuckets; i++) buckets[i] = (buckets[i] as number) + (b[i] as number);
    };
    const firstRecent = this.slices - this.recentSlices;
    for (let k = 0; k < this.slices; k++)
      add(this.ring[(this.head + k) % this.slices]?.get(route), k >= firstRecent);
    add(current, true);
    // The recent slices plus the part of the current one that has passed, or less just after the start.
    const now = performance.now();
    const seconds =
      Math.min(this.recentSlices * this.sliceMs + (now - this.lastTick), now - this.started) / 1000;
    return {
      route,
      rate: seconds > 0 ? total / seconds : 0,
      errorRatio: total === 0 ? 0 : failed / total,
      p50Ms: quantileMs(buckets, total, 0.5),
      p99Ms: quantileMs(buckets, total, 0.99),
      counts,
      errors,
    };
  }

  /** Read every route's counters; with `slot`, store the difference from the previous read in it. */
  private snapshotInto(slot: Map<string, Slice> | undefined): void {
    const seen = new Set<string>();
    for (const [route, s] of this.table.entries()) {
      seen.add(route);
      const before = this.previous.get(route);
      if (slot !== undefined) {
        const d = delta(s, before);
        if (d.count > 0) slot.set(route, d);
      }
      const now = before ?? { count: 0, errors: 0, buckets: new Float64Array(nBuckets) };
      now.count = s.count;
      now.errors = s.byClass[5] as number;
      now.buckets.set(s.buckets);
      this.previous.set(route, now);
    }
    for (const route of this.previous.keys()) if (!seen.has(route)) this.previous.delete(route);
  }
}

/** `s` minus `before`; a route whose counters went back (removed, then configured again) starts over. */
function delta(s: RouteStats, before: Cumulative | undefined): Slice {
  const restarted = before === undefined || s.count < before.count;
  const buckets = new Float64Array(nBuckets);
  for (let i = 0; i < nBuckets; i++)
    buckets[i] = (s.buckets[i] as number) - (restarted ? 0 : (before.buckets[i] as number));
  return {
    count: s.count - (restarted ? 0 : before.count),
    errors: (s.byClass[5] as number) - (restarted ? 0 : before.errors),
    buckets,
  };
}

/**
 * The q-quantile of a histogram, interpolated linearly inside its bucket as Prometheus's
 * `histogram_quantile` does (so the dashboard and a Grafana panel agree); beyond the last bound it is
 * that bound.
 */
export function quantileMs(buckets: Float64Array, total: number, q: number): number | null {
  if (total <= 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < nBuckets; i++) {
    const n = buckets[i] as number;
    if (seen + n >= rank && n > 0) {
      const upper = latencyBuckets[i];
      if (upper === undefined) return (latencyBuckets[latencyBuckets.length - 1] as number) * 1000;
      const lower = i === 0 ? 0 : (latencyBuckets[i - 1] as number);
      return (lower + (upper - lower) * ((rank - seen) / n)) * 1000;
    }
    seen += n;
  }
  return null;
}
