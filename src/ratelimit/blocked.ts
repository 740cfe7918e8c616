/**
 * Buckets known to be over their limit, remembered until their retry-after: a request for such a key is
 * rejected here without asking Redis, so a client hammering past its limit costs no round trip. Local
 * to one process; another replica learns on its own first rejected request.
 */
export class BlockedKeys {
  private readonly until = new Map<string, number>();

  constructor(private readonly maxKeys = 100_000) {}

  /** Remember `key` as rejecting until `untilMs` (on the caller's clock). */
  block(key: string, untilMs: number, now: number): void {
    if (this.until.size >= this.maxKeys) {
      for (const [k, t] of this.until) if (t <= now) this.until.delete(k);
      if (this.until.size >= this.maxKeys) this.until.clear();
    }
    this.until.set(key, untilMs);
  }

  /** The index of the first key still blocked at `now` and how long it stays so, or undefined. */
  find(keys: readonly string[], now: number): { index: number; remainingMs: number } | undefined {
    if (this.until.size === 0) return undefined;
    for (let i = 0; i < keys.length; i++) {
      const t = this.until.get(keys[i] as string);
      if (t === undefined) continue;
      if (t > now) return { index: i, remainingMs: t - now };
      this.until.delete(keys[i] as string);
    }
    return undefined;
  }

  size(): number {
    return this.until.size;
  }
}
