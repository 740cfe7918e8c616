/**
 * Results of checking a credential (a user and password, an API key), by a keyed hash of it: HMAC-SHA256
 * under a key made at process start, so the cache holds no credential, an entry cannot be computed
 * without that key (no planted or precomputed hit), and the map lookup's timing reveals nothing of the
 * credential itself. One cache per compiled user table: a table that changes (a rotated Secret) starts
 * empty, so a result is never taken from an older table. Bounded: the oldest entry goes when full (a table
 * keeps successes and refusals in two caches, so refusals never push out a success).
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Identity } from "../identity.ts";

const processKey = randomBytes(32);

/** A checked credential: its identity when valid, and per-route results derived from it (enforce.ts). */
export interface CredentialEntry {
  readonly identity: Identity | undefined;
  /** Renewed while a valid entry is used (get), so a user who keeps coming is never verified again. */
  untilMs: number;
  readonly derived: WeakMap<object, unknown>;
}

/** The cache key of a credential's parts (joined with NUL, which neither a header nor a name holds). */
export function credentialKey(...parts: readonly string[]): string {
  return createHmac("sha256", processKey).update(parts.join("\0")).digest("base64");
}

export class CredentialCache {
  private readonly entries = new Map<string, CredentialEntry>();

  constructor(
    private readonly maxEntries = 10_000,
    /** How long a valid result is kept; the table it came from cannot change under it. */
    private readonly validMs = 300_000,
    /** How long a refusal is kept: long enough to absorb a repeated wrong password. */
    private readonly invalidMs = 30_000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, nowMs: number): CredentialEntry | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.untilMs <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    // A valid entry past half its time is renewed and moved last (the oldest go first when full): users
    // who keep coming stay cached through a flood of wrong passwords, which never waits on bcrypt for them.
    if (e.identity !== undefined && e.untilMs - nowMs < this.validMs / 2) {
      e.untilMs = nowMs + this.validMs;
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e;
  }

  set(key: string, identity: Identity | undefined, nowMs: number): CredentialEntry {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const untilMs = nowMs + (identity === undefined ? this.invalidMs : this.validMs);
    const entry: CredentialEntry = { identity, untilMs, derived: new WeakMap() };
    this.entries.set(key, entry);
    return entry;
  }
}
