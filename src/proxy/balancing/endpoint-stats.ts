/**
 * What the load-aware pickers know about each endpoint: requests in flight from this process and the
 * moving average of its response-header time. Kept per endpoint address (`http://ip:port`), not per
 * compiled table, so a reload (any change anywhere in the configuration compiles a new table) does not
 * forget them, and two backends naming the same pod see one load, as ingress-nginx keys its EWMA by
 * `ip:port`. Only routes that balance by load touch this; round-robin routes never do.
 */

/** ingress-nginx's DECAY_TIME (10 s): an average halves its weight in about 7 s without new samples. */
export const DECAY_MS = 10_000;
/** Entries kept before idle ones are dropped (a cluster's endpoints come and go). */
const MAX_ENTRIES = 4096;
/** Idle for this long with nothing in flight: forgotten when the map is full. */
const FORGET_MS = 10 * DECAY_MS;

export interface EndpointStats {
  /** Requests sent and not yet answered (response headers) or failed. */
  inFlight: number;
  /** Moving average of response-header time in ms, as of `touched`; -1: never measured. */
  ewma: number;
  /** `performance.now()` of the last sample. */
  touched: number;
}

const byEndpoint = new Map<string, EndpointStats>();

/** The stats of `base`, created empty (`ewma` -1) on first use. */
export function statsOf(base: string): EndpointStats {
  let s = byEndpoint.get(base);
  if (s === undefined) {
    if (byEndpoint.size >= MAX_ENTRIES) forgetIdle(performance.now());
    s = { inFlight: 0, ewma: -1, touched: 0 };
    byEndpoint.set(base, s);
  }
  return s;
}

function forgetIdle(now: number): void {
  for (const [base, s] of byEndpoint)
    if (s.inFlight === 0 && now - s.touched > FORGET_MS) byEndpoint.delete(base);
}

/** The average as it stands at `now`: decayed toward 0 since its last sample (ingress-nginx's score). */
export function decayedEwma(s: EndpointStats, now: number): number {
  if (s.ewma <= 0) return 0;
  const idle = now - s.touched;
  return idle > 0 ? s.ewma * Math.exp(-idle / DECAY_MS) : s.ewma;
}

/** Adds a sample of `ms` (ingress-nginx's decay_ewma: the older the average, the more the sample counts). */
export function addSample(s: EndpointStats, ms: number, now: number): void {
  if (s.ewma < 0) s.ewma = ms;
  else {
    const idle = Math.max(0, now - s.touched);
    const w = Math.exp(-idle / DECAY_MS);
    s.ewma = s.ewma * w + ms * (1 - w);
  }
  s.touched = now;
}

/** For tests: forget everything. */
export function clearEndpointStats(): void {
  byEndpoint.clear();
}
