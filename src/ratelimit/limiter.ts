/**
 * What a counting store does, whether it is Redis (shared by every replica) or this process's memory.
 * Both count by GCRA with the same parameters and the same keys, so switching stores changes who shares
 * a bucket, never what a bucket means.
 */

/** One bucket a request draws on (one per rule of the route's rate limit). */
export interface LimitItem {
  /** Bucket key (keys.ts); the Redis key itself, hash-tagged so every item of a request shares a slot. */
  readonly key: string;
  /** GCRA emission interval: window / limit, in milliseconds. */
  readonly intervalMs: number;
  /** Requests admitted at once from an idle bucket (>= 1). */
  readonly burst: number;
}

/** How one bucket stands after the check. */
export interface ItemResult {
  /** Requests this bucket would still admit right now (0 when it rejected). */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again (the `t` of the RateLimit header). */
  readonly resetMs: number;
  /** When this bucket rejected: milliseconds until it admits one request; 0 when it admitted. */
  readonly retryAfterMs: number;
}

/** The decision for one request: admitted only if every bucket admitted (and then each counted it). */
export interface LimitResult {
  readonly allowed: boolean;
  /** In the order of the items asked about. */
  readonly items: readonly ItemResult[];
}

/** Thrown (rejected) when the shared store cannot answer in time; the caller applies the failure mode. */
export class LimiterUnavailableError extends Error {
  override readonly name = "LimiterUnavailableError";
}

export interface Limiter {
  /** `redis`: a shared store that can fail; `local`: this process's memory, which never fails. */
  readonly kind: "redis" | "local";
  /**
   * Decide for one request, counting it in every bucket only when all of them admit it. A store that
   * can decide from memory (the local store, a Redis lease) answers at once: no promise on that path.
   */
  check(items: readonly LimitItem[]): LimitResult | Promise<LimitResult>;
  /** Gateway replicas known to share the store (1 when unknown or local); for failure mode Local. */
  replicas(): number;
  /** True while the store is believed reachable (always true for the local store). */
  isUp(): boolean;
  /**
   * Counters for benchmarks and metrics: checks sent to the store, the round trips they took (a shared
   * store batches the checks of one event-loop turn; 0 for the local store), and checks it failed.
   */
  stats(): { readonly commands: number; readonly roundTrips: number; readonly failures: number };
  close(): Promise<void>;
}
