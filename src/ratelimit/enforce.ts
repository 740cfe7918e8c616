/**
 * The one call the request path makes: `enforcer.check(route.rateLimit, ctx)` after auth, before
 * the filters. Admitted requests cost at most one store round trip (none for an exempt client); a key
 * already known to be over its limit is rejected from memory until its retry-after.
 */
import type { BlockList } from "node:net";
import type { RouteRateLimit } from "../model/index.ts";
import { rateLimitedLog } from "../observability/log-limit.ts";
import { logger } from "../observability/logger.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import { BlockedKeys } from "./blocked.ts";
import { cidrSet, clientAddress, inSet } from "./client-ip.ts";
import {
  invalidLimit,
  limiterUnavailable,
  policyHeader,
  rateLimitHeader,
  tooManyRequests,
} from "./headers.ts";
import { bucketKeys, type RateLimitContext } from "./keys.ts";
import type { ItemResult, Limiter, LimitItem, LimitResult } from "./limiter.ts";
import { LocalLimiter } from "./local.ts";
import { registerLimiterMetrics } from "./metrics.ts";

export type { RateLimitContext } from "./keys.ts";

export type RateLimitOutcome =
  | { readonly allowed: true; readonly headers?: readonly [string, string][] }
  | { readonly allowed: false; readonly response: Response };

export interface RateLimitEnforcerOptions {
  readonly limiter: Limiter;
  readonly metrics?: GatewayMetrics;
  /** Live replicas sharing the store, for failure mode Local; default: the limiter's heartbeat count. */
  readonly replicas?: () => number;
  /** Monotonic clock in ms for the over-limit cache (tests). */
  readonly now?: () => number;
}

/** Per-configuration work done once: CIDR sets, emission intervals and the constant policy header. */
interface Compiled {
  readonly trusted: BlockList | undefined;
  readonly exempt: BlockList | undefined;
  readonly intervals: readonly number[];
  readonly policyHeader: string;
  /**
   * For limits keyed by client address alone (the common per-client limit): each address's bucket keys
   * and store items, built once instead of on every request. Undefined for other keys.
   */
  readonly byAddress: Map<string, { keys: string[]; items: LimitItem[] }> | undefined;
  /** Per rule, the clients it alone exempts (`RateLimitRule.exemptCIDRs`); undefined when no rule has any. */
  readonly ruleExempt: readonly (BlockList | undefined)[] | undefined;
  /** By the bit mask of the rules a client is exempt from: the limit without them (built on first use). */
  readonly narrowed: Map<number, RouteRateLimit> | undefined;
  /**
   * For a narrowed limit: the limit it was cut from and the indexes of the rules it keeps. Its bucket
   * keys are the full limit's, so a client counts in the same buckets whichever rules exempt it.
   */
  readonly cutFrom: { readonly limit: RouteRateLimit; readonly kept: readonly number[] } | undefined;
}

/** Addresses whose keys are kept per limit; past it the map starts over (a flood of addresses). */
const maxAddresses = 10_000;

function pick<T>(all: readonly T[], indexes: readonly number[]): T[] {
  return indexes.map((i) => all[i] as T);
}

function rememberAddress(c: Compiled, ip: string, keys: string[], items: LimitItem[]): void {
  const map = c.byAddress;
  if (map === undefined) return;
  if (map.size >= maxAddresses) map.clear();
  map.set(ip, { keys, items });
}

const admitted: RateLimitOutcome = { allowed: true };

/** Dry-run reports: one line per policy per 10 s (with the count suppressed since), never one per request. */
const shadowLog = rateLimitedLog(logger.child({ component: "ratelimit" }));
/** Requests refused by a limit marked invalid: likewise one line per policy per 10 s. */
const invalidLog = rateLimitedLog(logger.child({ component: "ratelimit" }));

export class RateLimitEnforcer {
  private readonly limiter: Limiter;
  private readonly metrics: GatewayMetrics | undefined;
  private readonly replicas: () => number;
  private readonly now: () => number;
  private readonly compiled = new WeakMap<RouteRateLimit, Compiled>();
  private readonly blocked = new BlockedKeys();
  /** Failure mode Local counts here while the store is down. */
  private readonly fallback = new LocalLimiter();
  /** Policy → decision → how many so far (read by the metrics at scrape time). */
  private readonly counters = new Map<string, Map<string, { n: number }>>();
  /** Policy name → when the store last failed one of its checks. */
  private readonly failedAt = new Map<string, number>();

  constructor(options: RateLimitEnforcerOptions) {
    this.limiter = options.limiter;
    this.metrics = options.metrics;
    this.replicas = options.replicas ?? (() => options.limiter.replicas());
    this.now = options.now ?? (() => performance.now());
    if (options.metrics) {
      registerLimiterMetrics(options.metrics.registry, options.limiter);
      options.metrics.setRateLimitDecisionSource(() => this.decisionTotals());
    }
  }

  /**
   * The verdict for one request. Synchronous whenever the store answers from memory (the in-process
   * store, a Redis lease, a key known to be over its limit), so the common case costs no promise.
   */
  check(limit: RouteRateLimit, ctx: RateLimitContext): RateLimitOutcome | Promise<RateLimitOutcome> {
    if (limit.invalid !== undefined) return this.refuseInvalid(limit);
    const c = this.compile(limit);
    // The policy's own trusted proxies override the global ones: its walk starts again from the peer.
    const walked =
      c.trusted && ctx.forwardedForBarred !== true
        ? clientAddress(ctx.peer ?? ctx.clientIp, ctx.header("x-forwarded-for"), c.trusted)
        : clientAddress(ctx.clientIp, null, undefined);
    // An unreadable X-Forwarded-For leaves the client unknown: counted under the peer that sent it.
    const ip = walked === "" ? clientAddress(ctx.peer ?? "", null, undefined) : walked;
    if (c.exempt !== undefined && inSet(c.exempt, ip)) return this.decide(limit, "exempt", admitted);
    if (c.ruleExempt === undefined) return this.count(limit, c, ctx, ip);
    const narrowed = this.narrow(limit, c, ip);
    if (narrowed === undefined) return this.decide(limit, "exempt", admitted);
    return this.count(narrowed, this.compile(narrowed), ctx, ip);
  }

  /** Counts the request in the limit's buckets (`ip` is neither exempt from it nor from any of its rules). */
  private count(
    limit: RouteRateLimit,
    c: Compiled,
    ctx: RateLimitContext,
    ip: string,
  ): RateLimitOutcome | Promise<RateLimitOutcome> {
    const cached = c.byAddress?.get(ip);
    const keys =
      cached?.keys ??
      (c.cutFrom === undefined
        ? bucketKeys(limit, ctx, ip)
        : pick(bucketKeys(c.cutFrom.limit, ctx, ip), c.cutFrom.kept));
    const shared = this.limiter.kind === "redis";
    if (shared) {
      const hit = this.blocked.find(keys, this.now());
      if (hit !== undefined) {
        const rule = limit.rules[hit.index];
        const header =
          rule && !limit.hideHeaders ? `"${rule.name}";r=0;t=${Math.ceil(hit.remainingMs / 1000)}` : "";
        return this.reject(limit, c, hit.remainingMs, header, "limited");
      }
    }
    let items = cached?.items;
    if (items === undefined) {
      items = keys.map((key, i) => ({
        key,
        intervalMs: c.intervals[i] as number,
        burst: (limit.rules[i] as { burst: number }).burst,
      }));
      rememberAddress(c, ip, keys, items);
    }
    let answer: LimitResult | Promise<LimitResult>;
    try {
      answer = this.limiter.check(items);
    } catch {
      return this.storeFailed(limit, c, keys, items);
    }
    if (answer instanceof Promise)
      return answer.then(
        (result) => this.verdict(limit, c, keys, result, false),
        () => this.storeFailed(limit, c, keys, items),
      );
    return this.verdict(limit, c, keys, answer, false);
  }

  /**
   * A limit that cannot be enforced (an invalid policy or annotation) fails closed: 500, never forwarded,
   * whoever asks (no exemption, no dry run: the settings that would say so are what is invalid).
   */
  private refuseInvalid(limit: RouteRateLimit): RateLimitOutcome {
    invalidLog("error", limit.policy, "rate limit cannot be enforced; its routes answer 500", {
      policy: limit.policy,
      reason: limit.invalid,
    });
    return this.decide(limit, "policy_invalid", { allowed: false, response: invalidLimit(limit) });
  }

  /** The store could not answer: the policy's failure mode decides. */
  private storeFailed(
    limit: RouteRateLimit,
    c: Compiled,
    keys: readonly string[],
    items: readonly LimitItem[],
  ): RateLimitOutcome {
    this.failedAt.set(limit.policy, Date.now());
    if (limit.failureMode === "Open") return this.decide(limit, "failed_open", admitted);
    if (limit.failureMode === "Closed") {
      if (limit.shadow) return this.decide(limit, "failed_closed", admitted);
      return this.decide(limit, "failed_closed", { allowed: false, response: limiterUnavailable() });
    }
    return this.verdict(limit, c, keys, this.fallback.checkNow(this.scaled(limit, items)), true);
  }

  private verdict(
    limit: RouteRateLimit,
    c: Compiled,
    keys: readonly string[],
    result: LimitResult,
    local: boolean,
  ): RateLimitOutcome {
    const shared = this.limiter.kind === "redis";
    if (result.allowed) {
      const decision = local ? "local_allowed" : "allowed";
      if (limit.hideHeaders || limit.shadow) return this.decide(limit, decision, admitted);
      return this.decide(limit, decision, { allowed: true, headers: this.headers(limit, c, result.items) });
    }
    let retryMs = 0;
    const now = this.now();
    result.items.forEach((r, i) => {
      retryMs = Math.max(retryMs, r.retryAfterMs);
      if (shared && !local && r.retryAfterMs > 0)
        this.blocked.block(keys[i] as string, now + r.retryAfterMs, now);
    });
    const header = limit.hideHeaders ? "" : rateLimitHeader(limit, result.items);
    return this.reject(limit, c, retryMs, header, local ? "local_limited" : "limited");
  }

  private *decisionTotals(): Iterable<readonly [string, string, number]> {
    for (const [policy, byDecision] of this.counters)
      for (const [decision, counted] of byDecision) yield [policy, decision, counted.n];
  }

  /** Policies whose checks the store failed within `withinMs` (for the `Degraded` policy condition). */
  degradedPolicies(withinMs = 10_000): string[] {
    const since = Date.now() - withinMs;
    return [...this.failedAt].filter(([, at]) => at >= since).map(([name]) => name);
  }

  /** Whether the shared store answers (always true for the in-process store). */
  storeUp(): boolean {
    return this.limiter.isUp();
  }

  async close(): Promise<void> {
    await this.limiter.close();
    await this.fallback.close();
  }

  private reject(limit: RouteRateLimit, c: Compiled, retryMs: number, header: string, decision: string) {
    if (limit.shadow) {
      shadowLog("warn", limit.policy, "dry run: the rate limit would have rejected this request", {
        policy: limit.policy,
        retryAfterMs: Math.ceil(retryMs),
      });
      return this.decide(limit, "shadow", admitted);
    }
    const headers: [string, string][] =
      header === ""
        ? []
        : [
            ["ratelimit-policy", c.policyHeader],
            ["ratelimit", header],
          ];
    return this.decide(limit, decision, { allowed: false, response: tooManyRequests(retryMs, headers) });
  }

  private headers(limit: RouteRateLimit, c: Compiled, results: readonly ItemResult[]): [string, string][] {
    return [
      ["ratelimit-policy", c.policyHeader],
      ["ratelimit", rateLimitHeader(limit, results)],
    ];
  }

  private decide(limit: RouteRateLimit, decision: string, outcome: RateLimitOutcome): RateLimitOutcome {
    if (this.metrics !== undefined) {
      let byDecision = this.counters.get(limit.policy);
      if (byDecision === undefined) {
        byDecision = new Map();
        this.counters.set(limit.policy, byDecision);
      }
      const counted = byDecision.get(decision);
      if (counted === undefined) byDecision.set(decision, { n: 1 });
      else counted.n++;
    }
    return outcome;
  }

  /** Each rule at its limit and burst divided by the live replicas (at least 1), for failure mode Local. */
  private scaled(limit: RouteRateLimit, items: readonly LimitItem[]): LimitItem[] {
    const n = Math.max(1, Math.floor(this.replicas()));
    return items.map((item, i) => {
      const rule = limit.rules[i] as { limit: number; burst: number; windowSeconds: number };
      const share = Math.max(1, Math.floor(rule.limit / n));
      return {
        key: item.key,
        intervalMs: (rule.windowSeconds * 1000) / share,
        burst: Math.max(1, Math.floor(rule.burst / n)),
      };
    });
  }

  private compile(limit: RouteRateLimit, cutFrom?: Compiled["cutFrom"]): Compiled {
    let c = this.compiled.get(limit);
    if (c === undefined) {
      const ruleExempt =
        cutFrom === undefined && limit.rules.some((r) => (r.exemptCIDRs?.length ?? 0) > 0)
          ? limit.rules.map((r) => cidrSet(r.exemptCIDRs ?? []))
          : undefined;
      c = {
        trusted: cidrSet(limit.clientIP.trustedProxies),
        exempt: cidrSet(limit.exemptCIDRs),
        intervals: limit.rules.map((r) => (r.windowSeconds * 1000) / r.limit),
        policyHeader: policyHeader(limit),
        byAddress: limit.rules.every((r) => r.keys.length === 1 && r.keys[0]?.source === "ClientIP")
          ? new Map()
          : undefined,
        ruleExempt,
        narrowed: ruleExempt === undefined ? undefined : new Map(),
        cutFrom,
      };
      this.compiled.set(limit, c);
    }
    return c;
  }

  /**
   * The limit without the rules that exempt `ip`: the limit itself when none does, undefined when all do.
   * Narrowed limits are kept per set of exempting rules (at most 2^16: rules are at most 16).
   */
  private narrow(limit: RouteRateLimit, c: Compiled, ip: string): RouteRateLimit | undefined {
    const sets = c.ruleExempt as readonly (BlockList | undefined)[];
    let mask = 0;
    for (let i = 0; i < sets.length; i++) if (inSet(sets[i], ip)) mask |= 1 << i;
    if (mask === 0) return limit;
    if (mask === (1 << sets.length) - 1) return undefined;
    let narrowed = c.narrowed?.get(mask);
    if (narrowed === undefined) {
      const kept = limit.rules.flatMap((_, i) => ((mask >> i) & 1 ? [] : [i]));
      narrowed = { ...limit, rules: kept.map((i) => limit.rules[i] as RouteRateLimit["rules"][number]) };
      c.narrowed?.set(mask, narrowed);
      this.compile(narrowed, { limit, kept });
    }
    return narrowed;
  }
}
