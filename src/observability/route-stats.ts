/**
 * Per-route request statistics gathered on the hot path as plain numbers in preallocated arrays (no label
 * hashing, no allocation per request), turned into Prometheus series only when scraped. Keys are route
 * names from the configuration, never anything a client sends, so the number of series is bounded by the
 * configuration however many distinct hosts or paths clients try.
 */

/** Upper bounds (seconds) of the latency histogram buckets; +Inf is implicit. */
export const latencyBuckets = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Status classes 1xx…5xx at indices 1…5; index 0 collects anything out of range. */
export interface RouteStats {
  readonly byClass: Float64Array;
  /** Cumulative-on-read bucket counts; index `latencyBuckets.length` is the +Inf overflow. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
  /** Response body bytes, from Content-Length when the upstream sent one. */
  bytes: number;
}

/** The label used for requests that matched no route (404s, 400s). */
export const noRoute = "(none)";

export class RouteStatsTable {
  private readonly stats = new Map<string, RouteStats>();

  /** Count one finished request. `seconds` is the time to response headers. */
  record(route: string, status: number, seconds: number, bytes: number): void {
    let s = this.stats.get(route);
    if (s === undefined) {
      s = {
        byClass: new Float64Array(6),
        buckets: new Float64Array(latencyBuckets.length + 1),
        sum: 0,
        count: 0,
        bytes: 0,
      };
      this.stats.set(route, s);
    }
    const cls = (status / 100) | 0;
    const k = cls >= 1 && cls <= 5 ? cls : 0;
    s.byClass[k] = (s.byClass[k] as number) + 1;
    let i = 0;
    while (i < latencyBuckets.length && seconds > (latencyBuckets[i] as number)) i++;
    s.buckets[i] = (s.buckets[i] as number) + 1;
    s.sum += seconds;
    s.count++;
    if (bytes > 0) s.bytes += bytes;
  }

  /** Forget routes that are no longer configured, so removed routes do not keep series forever. */
  retain(routes: ReadonlySet<string>): void {
    for (const name of this.stats.keys()) if (name !== noRoute && !routes.has(name)) this.stats.delete(name);
  }

  entries(): IterableIterator<[string, RouteStats]> {
    return this.stats.entries();
  }

  get size(): number {
    return this.stats.size;
  }
}
