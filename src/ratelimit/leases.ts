/**
 * Leases: a replica that finds a bucket far from its limit takes a few requests' worth of it at once, in
 * the same script call that admits the request, and admits the next requests on those buckets from
 * memory. A limit that is never approached then costs a Redis call every `lease` requests instead of
 * every request, which is what keeps generous limits (the common case) nearly free.
 *
 * Why it never admits more than the limit: leased requests are counted in Redis when they are leased,
 * as if they had arrived then; admitting them later is only more conservative. What it can cost: tokens
 * leased and not used before the lease ends are lost to every replica. That loss is bounded by asking
 * only when a bucket has at least `leaseMin × leaseShare` requests left and taking at most
 * 1/`leaseShare` of what is left (leaseShare grows with the replicas), so a bucket close to its limit,
 * and any small limit, is never leased and stays exact to the request.
 */
import type { ItemResult, LimitItem, LimitResult } from "./limiter.ts";

/** Fewest requests worth leasing. */
export const leaseMin = 16;
/** Most requests leased at once. */
export const leaseMax = 1024;
/** A lease serves this long at most (ms): unused requests go back to nobody, so keep it short. */
export const leaseLifetimeMs = 1_000;
/** Buckets held in memory at most; past it no new lease is taken until old ones end. */
const maxLeases = 20_000;

interface Lease {
  /** Requests still to admit from memory. */
  tokens: number;
  /** Below this many tokens the next request asks for more, so the lease is refilled before it runs out. */
  readonly low: number;
  readonly endsAt: number;
  /** Past this the next request asks for a new lease (before this one ends). */
  readonly renewAt: number;
  readonly leasedAt: number;
  /** The buckets as the script left them, after the lease was taken. */
  readonly items: readonly ItemResult[];
}

/** The buckets of one request, as one string (every request with the same keys shares a lease). */
export function leaseKey(items: readonly LimitItem[]): string {
  if (items.length === 1) return (items[0] as LimitItem).key;
  let key = "";
  for (const item of items) key += `${item.key}\n`;
  return key;
}

export class LeaseBook {
  private readonly leases = new Map<string, Lease>();
  /** Lease keys a call in flight asked a lease for: other requests on them do not ask again. */
  private readonly asking = new Set<string>();

  /**
   * Admit from a live lease, or undefined when the store must decide: no lease, or one running low (then
   * this request goes to the store and asks for more while the requests after it use what is left; a
   * lease that ran dry while the store was asked sends every request to the store until it answers).
   */
  take(key: string, now: number): LimitResult | undefined {
    const lease = this.leases.get(key);
    if (lease === undefined) return undefined;
    if (lease.tokens <= 0 || now >= lease.endsAt) {
      this.leases.delete(key);
      return undefined;
    }
    if ((lease.tokens <= lease.low || now >= lease.renewAt) && !this.asking.has(key)) return undefined;
    lease.tokens--;
    const elapsed = now - lease.leasedAt;
    const held = lease.items;
    const items: ItemResult[] = [];
    for (let i = 0; i < held.length; i++) {
      const r = held[i] as ItemResult;
      // What this replica still holds is part of what the client may still send.
      items.push({
        remaining: r.remaining + lease.tokens,
        resetMs: Math.max(0, Math.ceil(r.resetMs - elapsed)),
        retryAfterMs: 0,
      });
    }
    return { allowed: true, items };
  }

  /** Whether the next store call for `key` should ask for a lease (one call at a time per key). */
  shouldAsk(key: string): boolean {
    if (this.asking.has(key)) return false;
    if (this.leases.size >= maxLeases && !this.sweep(performance.now())) return false;
    this.asking.add(key);
    return true;
  }

  /** The call that asked for `key` answered: `tokens` leased (0 when the script granted none). */
  granted(key: string, tokens: number, items: readonly ItemResult[], now: number): void {
    this.asking.delete(key);
    if (tokens <= 0) return;
    const held = this.leases.get(key);
    const left = held !== undefined && now < held.endsAt ? held.tokens : 0;
    this.leases.set(key, {
      tokens: tokens + left,
      low: Math.floor(tokens / 4),
      endsAt: now + leaseLifetimeMs,
      renewAt: now + (leaseLifetimeMs * 3) / 4,
      leasedAt: now,
      items,
    });
  }

  /** The call that asked for `key` failed. */
  failed(key: string): void {
    this.asking.delete(key);
  }

  get size(): number {
    return this.leases.size;
  }

  /** Drop ended leases; true when that made room. */
  private sweep(now: number): boolean {
    for (const [key, lease] of this.leases)
      if (now >= lease.endsAt || lease.tokens <= 0) this.leases.delete(key);
    return this.leases.size < maxLeases;
  }
}
