import { Cluster, Redis, type RedisOptions } from "ioredis";
import { logger } from "../observability/logger.ts";
import { LeaseBook, leaseKey, leaseMax } from "./leases.ts";
import type { Limiter, LimitItem, LimitResult } from "./limiter.ts";
import { LimiterUnavailableError } from "./limiter.ts";
import { batchArgs, type CheckAnswer, groupChecks, type PendingCheck, splitReply } from "./redis-batch.ts";
import { gcraLua, heartbeatLua } from "./redis-script.ts";
import { parseRedisUrl, type RedisTarget, redact } from "./redis-url.ts";

export interface RedisLimiterOptions {
  /** `--redis-url` (redis-url.ts lists the forms). */
  readonly url: string;
  /** Longest a request waits for Redis; past it the failure mode applies. Tens of ms at the edge. */
  readonly commandTimeoutMs?: number;
  /** Prefix of the heartbeat key, so fleets sharing one Redis count their replicas apart. */
  readonly keyPrefix?: string;
  /** How often this replica announces itself (failure mode Local divides limits by the live count). */
  readonly heartbeatMs?: number;
  /**
   * Take a share of a bucket far from its limit and admit the next requests on it from memory
   * (leases.ts). Default true; off makes every request a store check (exact headers, more Redis load).
   */
  readonly leases?: boolean;
  /**
   * After a timed-out command Redis is skipped (failure mode at once) for a while, then probed again:
   * 100 ms after the first timeout, doubling on each timed-out probe up to this (ms), reset by an answer.
   * A lone slow answer under load costs a tenth of a second; a hung Redis is probed ever less often.
   */
  readonly suspendMs?: number;
}

type ScriptClient = {
  gatehouseGcra(numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  gatehouseHeartbeat(key: string, member: string, horizonMs: number): Promise<unknown>;
};

const log = logger.child({ component: "ratelimit" });

/**
 * The shared store: GCRA in Redis, at most one EVALSHA per request (the checks of one event-loop turn
 * share one, redis-batch.ts; auto-pipelined with the turn's other calls), no
 * offline queue (a command while disconnected fails at once instead of waiting), at most one retry and a
 * command timeout of tens of ms, so no request waits longer than that for Redis. Reconnection is
 * automatic and unbounded, so limits resume when Redis is back.
 */
export class RedisLimiter implements Limiter {
  readonly kind = "redis" as const;
  private readonly client: Redis | Cluster;
  private readonly scripts: ScriptClient;
  private readonly heartbeatKey: string;
  private readonly member = crypto.randomUUID();
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly suspendMs: number;
  private readonly timeoutMs: number;
  private suspendedUntil = 0;
  /** The current skip (ms): 0 while Redis answers, then 100, 200, … up to `suspendMs`. */
  private backoffMs = 0;
  private lastReplicas = 1;
  private up = false;
  /** Checks asked for, round trips (script calls) made, and checks the store did not answer. */
  private commands = 0;
  private roundTrips = 0;
  private failures = 0;
  /** Checks asked for in this event-loop turn, sent by `flush` when the turn's I/O is done. */
  private queue: PendingCheck[] = [];
  /** Requests leased from buckets far from their limit (leases.ts). */
  private readonly leases = new LeaseBook();
  private readonly leasing: boolean;

  constructor(options: RedisLimiterOptions) {
    const target = parseRedisUrl(options.url);
    if ("error" in target) throw new Error(`--redis-url: ${target.error}`);
    this.timeoutMs = options.commandTimeoutMs ?? 50;
    this.leasing = options.leases ?? true;
    this.client = connect(target, this.timeoutMs);
    this.client.defineCommand("gatehouseGcra", { lua: gcraLua });
    this.client.defineCommand("gatehouseHeartbeat", { lua: heartbeatLua, numberOfKeys: 1 });
    this.scripts = this.client as unknown as ScriptClient;
    this.suspendMs = options.suspendMs ?? 2_000;
    this.heartbeatKey = `${options.keyPrefix ?? "gatehouse"}:replicas`;
    const every = options.heartbeatMs ?? 2_000;
    this.client.on("ready", () => {
      if (!this.up) log.info("redis reachable", { url: redact(options.url) });
      this.up = true;
      this.suspendedUntil = 0;
      this.backoffMs = 0;
      void this.beat(every);
    });
    this.client.on("error", (err: Error) => {
      if (this.up) log.warn("redis unreachable", { url: redact(options.url), error: err.message });
      this.up = false;
    });
    this.client.on("close", () => {
      this.up = false;
    });
    this.heartbeat = setInterval(() => void this.beat(every), every);
    this.heartbeat.unref?.();
  }

  check(items: readonly LimitItem[]): LimitResult | Promise<LimitResult> {
    // While Redis is unreachable leases are not used either: the policy's failure mode decides at once,
    // as operators expect of "Redis is down", rather than after the last lease ran out.
    if (!this.isUp()) {
      this.failures++;
      return Promise.reject(new LimiterUnavailableError("redis is not connected"));
    }
    const key = this.leasing ? leaseKey(items) : undefined;
    if (key !== undefined) {
      const leased = this.leases.take(key, performance.now());
      if (leased !== undefined) return leased;
    }
    this.commands++;
    const lease = key !== undefined && this.leases.shouldAsk(key) ? key : undefined;
    return new Promise<LimitResult>((resolve, reject) => {
      this.queue.push({ items, lease, ask: leaseMax, resolve, reject });
      if (this.queue.length === 1) setImmediate(this.flush);
    });
  }

  /** Send what the turn asked for: one script call per group (redis-batch.ts). */
  private readonly flush = (): void => {
    const queue = this.queue;
    this.queue = [];
    for (const batch of groupChecks(queue, this.client instanceof Cluster)) void this.send(batch);
  };

  private async send(batch: PendingCheck[]): Promise<void> {
    // Each live replica leases at most 1/(8 × replicas) of what a bucket has left.
    const { numKeys, args } = batchArgs(batch, 8 * Math.max(1, this.lastReplicas));
    this.roundTrips++;
    let answers: CheckAnswer[];
    try {
      const reply = await this.withDeadline(this.scripts.gatehouseGcra(numKeys, ...args));
      answers = splitReply(reply, batch);
    } catch (err) {
      this.failures += batch.length;
      // A timeout means Redis is slow or hung: skip it for a moment, so only a few requests pay the wait.
      if (/timed out/i.test((err as Error).message)) this.suspend();
      const failure = new LimiterUnavailableError((err as Error).message);
      for (const check of batch) {
        if (check.lease !== undefined) this.leases.failed(check.lease);
        check.reject(failure);
      }
      return;
    }
    this.backoffMs = 0;
    const now = performance.now();
    for (let i = 0; i < batch.length; i++) {
      const check = batch[i] as PendingCheck;
      const answer = answers[i] as CheckAnswer;
      if (check.lease !== undefined)
        this.leases.granted(check.lease, answer.leased, answer.result.items, now);
      check.resolve(answer.result);
    }
  }

  /**
   * ioredis starts a command's timeout when the command is written, and with auto-pipelining a command
   * may sit behind a pipeline still in flight: measured against a hung Redis, a 50 ms timeout let some
   * requests wait 100 ms. This deadline starts when the request asks, so none waits longer.
   */
  private withDeadline<T>(command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("Command timed out (deadline)")), this.timeoutMs);
      command.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  /**
   * Start a skip, unless one is running: the commands sent before it started time out just after it and
   * are one episode, not several (so concurrency does not jump the backoff to its maximum).
   */
  private suspend(): void {
    const now = Date.now();
    if (now < this.suspendedUntil) return;
    this.backoffMs = Math.min(this.suspendMs, this.backoffMs === 0 ? 100 : this.backoffMs * 2);
    this.suspendedUntil = now + this.backoffMs;
  }

  replicas(): number {
    return this.lastReplicas;
  }

  isUp(): boolean {
    return this.up && this.client.status === "ready" && Date.now() >= this.suspendedUntil;
  }

  stats() {
    return { commands: this.commands, roundTrips: this.roundTrips, failures: this.failures };
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    try {
      if (this.client.status === "ready") await this.client.zrem(this.heartbeatKey, this.member);
    } catch {
      // best effort: the member expires anyway
    }
    this.client.disconnect();
  }

  /** Announce this replica and remember how many are live (kept when Redis cannot be asked). */
  private async beat(everyMs: number): Promise<void> {
    if (this.client.status !== "ready") return;
    try {
      const n = Number(await this.scripts.gatehouseHeartbeat(this.heartbeatKey, this.member, everyMs * 3));
      if (Number.isInteger(n) && n >= 1) this.lastReplicas = n;
    } catch {
      // the next beat tries again; the last known count stands
    }
  }
}

/** An ioredis client set for the edge: fail fast rather than queue, reconnect forever in the background. */
export function connect(target: RedisTarget, commandTimeout: number): Redis | Cluster {
  const common: RedisOptions = {
    commandTimeout,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    enableAutoPipelining: true,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
  };
  const retryStrategy = (times: number) => Math.min(50 * times, 1_000);
  if (target.kind === "cluster") {
    // No auto-pipelining on Cluster: ioredis puts a turn's commands in one pipeline and refuses it when
    // their keys map to different nodes ("All keys in the pipeline should belong to the same slots
    // allocation group", seen against a real 3-master cluster). The batcher (redis-batch.ts) already
    // makes one script call per hash tag per turn, which is what auto-pipelining would have saved.
    return new Cluster(
      target.nodes.map((n) => ({ host: n.host, port: n.port })),
      {
        enableOfflineQueue: false,
        enableAutoPipelining: false,
        clusterRetryStrategy: retryStrategy,
        redisOptions: { ...common, enableAutoPipelining: false },
      },
    );
  }
  const base = { ...common, enableOfflineQueue: false, retryStrategy, db: target.db };
  if (target.kind === "sentinel") {
    return new Redis({
      ...base,
      sentinels: target.sentinels.map((n) => ({ host: n.host, port: n.port })),
      name: target.name,
      ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
      ...(target.tls ? { enableTLSForSentinelMode: true } : {}),
    });
  }
  return new Redis({ ...base, host: target.node.host, port: target.node.port });
}
