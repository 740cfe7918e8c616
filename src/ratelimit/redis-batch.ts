/**
 * Checks asked for in one event-loop turn go to Redis as one script call. Under load the gateway's cost
 * of a Redis round trip (an ioredis command, its timer, its reply parse) and Redis's cost of a script
 * call were per request; batched they are per turn, while each request still gets its own verdict and
 * never waits longer than the command timeout. Requests are decided in the order they asked, inside one
 * script run, so two requests on one bucket in one batch see each other exactly as two calls would.
 *
 * Redis Cluster runs a script on one node only, so a batch holds only checks whose keys share a hash tag
 * (keys.ts puts every key of one request under one tag).
 */
import { uncounted } from "./gcra.ts";
import { leaseMin } from "./leases.ts";
import type { ItemResult, LimitItem, LimitResult } from "./limiter.ts";
import { LimiterUnavailableError } from "./limiter.ts";

/** A check waiting for its batch's reply. */
export interface PendingCheck {
  readonly items: readonly LimitItem[];
  /** The lease key when this check asks for a lease (leases.ts), else undefined. */
  readonly lease: string | undefined;
  /** The most requests it may lease. */
  readonly ask: number;
  readonly resolve: (result: LimitResult) => void;
  readonly reject: (err: Error) => void;
}

/** Most checks in one script call, so one call never holds Redis for long. */
export const maxBatch = 128;

/**
 * Split the queue into script calls: in asking order, at most `maxBatch` each; with `byTag`, checks of
 * different hash tags never share a call.
 */
export function groupChecks(queue: readonly PendingCheck[], byTag: boolean): PendingCheck[][] {
  const groups: PendingCheck[][] = [];
  if (!byTag) {
    for (let i = 0; i < queue.length; i += maxBatch) groups.push(queue.slice(i, i + maxBatch));
    return groups;
  }
  const open = new Map<string, PendingCheck[]>();
  for (const check of queue) {
    const tag = hashTag(check.items[0]?.key ?? "");
    let group = open.get(tag);
    if (group === undefined || group.length >= maxBatch) {
      group = [];
      open.set(tag, group);
      groups.push(group);
    }
    group.push(check);
  }
  return groups;
}

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
export function hashTag(key: string): string {
  const open = key.indexOf("{");
  if (open < 0) return key;
  const close = key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * KEYS and ARGV of the batch script (redis-script.ts): every key in order; the number of checks, the
 * lease share and minimum, then per check its key count and lease ask, and per key interval and burst.
 */
export function batchArgs(
  batch: readonly PendingCheck[],
  leaseShare: number,
): { numKeys: number; args: (string | number)[] } {
  const keys: string[] = [];
  const argv: (string | number)[] = [batch.length, leaseShare, leaseMin];
  for (const check of batch) {
    argv.push(check.items.length, check.lease === undefined ? 0 : check.ask);
    for (const item of check.items) {
      keys.push(item.key);
      argv.push(item.intervalMs, item.burst);
    }
  }
  const numKeys = keys.length;
  const args: (string | number)[] = keys;
  for (const a of argv) args.push(a);
  return { numKeys, args };
}

/** One check's answer: the verdict and the requests leased with it. */
export interface CheckAnswer {
  readonly result: LimitResult;
  readonly leased: number;
}

/** The batch script's reply, one answer per check in order: admitted, leased, then per key three numbers. */
export function splitReply(reply: unknown, batch: readonly PendingCheck[]): CheckAnswer[] {
  const expected = batch.reduce((n, c) => n + 2 + 3 * c.items.length, 0);
  if (!Array.isArray(reply) || reply.length !== expected) {
    throw new LimiterUnavailableError(`unexpected reply from the rate limit script: ${String(reply)}`);
  }
  const answers: CheckAnswer[] = [];
  let at = 0;
  for (const check of batch) {
    const admitted = Number(reply[at++]) === 1;
    const leased = Number(reply[at++]);
    const items: ItemResult[] = [];
    for (const asked of check.items) {
      const r = {
        remaining: Number(reply[at]),
        resetMs: Number(reply[at + 1]),
        retryAfterMs: Number(reply[at + 2]),
      };
      at += 3;
      // A bucket that admitted a request another bucket refused did not count it after all.
      items.push(admitted ? r : uncounted(r, asked.intervalMs, asked.burst));
    }
    answers.push({ result: { allowed: admitted, items }, leased: admitted ? leased : 0 });
  }
  return answers;
}
