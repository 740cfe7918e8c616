/**
 * Verified tokens by SHA-256 of the token (the token itself is not kept), each until its `exp`, so a
 * repeated token costs one hash and one map lookup. One cache per provider configuration: a token
 * verified for one audience is never taken from the cache for another. Bounded: when full, the oldest
 * entry goes (insertion order), expired ones go when met.
 */
import type { Identity } from "./identity.ts";

export interface CachedToken {
  readonly identity: Identity;
  /** Valid until (ms); the identity's `exp` unless the caller knows an earlier limit. */
  readonly untilMs: number;
  /** Per-route results derived from the identity (authorization, claim headers), built once. */
  readonly derived: WeakMap<object, unknown>;
}

export class VerifiedTokenCache {
  private readonly entries = new Map<string, CachedToken>();

  constructor(private readonly maxEntries = 10_000) {}

  get size(): number {
    return this.entries.size;
  }

  /** The entry for a token hash while its identity has not expired. `skewMs` extends `exp` as verification did. */
  get(hash: string, nowMs: number, skewMs: number): CachedToken | undefined {
    const e = this.entries.get(hash);
    if (e === undefined) return undefined;
    if (e.untilMs + skewMs > nowMs) return e;
    this.entries.delete(hash);
    return undefined;
  }

  set(hash: string, identity: Identity, untilMs = identity.expiresAtMs): CachedToken {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const entry: CachedToken = { identity, untilMs, derived: new WeakMap() };
    this.entries.set(hash, entry);
    return entry;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The cache key of a token: SHA-256, base64 (collision-resistant, unlike a fast non-cryptographic hash). */
export function tokenHash(token: string): string {
  return Bun.CryptoHasher.hash("sha256", token, "base64") as string;
}
