/**
 * Rate limiting as one process runs it: the store `--redis-url` names (this process's memory when unset),
 * the enforcer the request path calls, and the store's health made visible. Translation is pure and
 * cannot know whether Redis answers, so the policy statuses it computes are completed here with a
 * `Degraded` condition (status.ts), and published again whenever the set of degraded policies changes:
 * a Redis outage shows on the RateLimitPolicy objects within a health tick, not only at the next config
 * change. The same set drives `gatehouse_ratelimit_degraded{policy}`.
 */
import type { GatewayModel } from "../model/index.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import type { ObjectStatus } from "../status/types.ts";
import { createLimiter } from "./create.ts";
import { RateLimitEnforcer } from "./enforce.ts";
import type { Limiter } from "./limiter.ts";
import { withStoreHealth } from "./status.ts";

export interface RateLimitRuntimeOptions {
  /** `--redis-url`; unset or empty: the in-process store (the embedded default). */
  readonly redisUrl?: string | undefined;
  /** `--redis-timeout-ms`. */
  readonly commandTimeoutMs?: number;
  readonly metrics?: GatewayMetrics;
  /** How often the store's health is looked at (ms). */
  readonly healthEveryMs?: number;
  /** A policy stays degraded this long after its last failed check (ms), so a blip does not flap. */
  readonly degradedForMs?: number;
}

type FailureMode = "Open" | "Closed" | "Local";

export class RateLimitRuntime {
  readonly enforcer: RateLimitEnforcer;
  private readonly limiter: Limiter;
  private readonly metrics: GatewayMetrics | undefined;
  private readonly degradedForMs: number;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  /** Every limit in force, by policy name (`ratelimitpolicy/…` and `ingress/…`), with its failure mode. */
  private policies = new Map<string, FailureMode>();
  private statuses: readonly ObjectStatus[] = [];
  private publisher: ((statuses: readonly ObjectStatus[]) => void) | undefined;
  /** The degraded set last published, as a sorted list joined (cheap to compare). */
  private published = "";

  constructor(options: RateLimitRuntimeOptions) {
    this.limiter = createLimiter({
      ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
      ...(options.commandTimeoutMs !== undefined ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
    });
    this.metrics = options.metrics;
    this.enforcer = new RateLimitEnforcer({
      limiter: this.limiter,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    this.degradedForMs = options.degradedForMs ?? 10_000;
    // The in-process store never fails: nothing to watch.
    if (this.limiter.kind === "redis") {
      this.timer = setInterval(() => this.tick(), options.healthEveryMs ?? 1_000);
      this.timer.unref?.();
    }
  }

  /** Whether limits are counted in a store shared by every replica. */
  get shared(): boolean {
    return this.limiter.kind === "redis";
  }

  /**
   * Take a newly applied model and its statuses: `publish` gets them now (completed with `Degraded`
   * when the store is shared) and again on each change of the store's health, until the next call.
   */
  publish(
    model: GatewayModel,
    statuses: readonly ObjectStatus[],
    publish: (statuses: readonly ObjectStatus[]) => void,
  ): void {
    this.policies = failureModes(model);
    this.statuses = statuses;
    this.publisher = publish;
    const degraded = this.degraded();
    this.published = [...degraded].sort().join("\n");
    this.updateMetric(degraded);
    publish(this.completed(degraded));
  }

  /** The policies in force whose store checks fail now or failed within `degradedForMs`. */
  degraded(): Set<string> {
    if (!this.shared) return new Set();
    if (!this.enforcer.storeUp()) return new Set(this.policies.keys());
    const recent = this.enforcer.degradedPolicies(this.degradedForMs);
    return new Set(recent.filter((p) => this.policies.has(p)));
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.publisher = undefined;
    await this.enforcer.close();
  }

  private tick(): void {
    const degraded = this.degraded();
    const key = [...degraded].sort().join("\n");
    if (key === this.published) return;
    this.published = key;
    this.updateMetric(degraded);
    this.publisher?.(this.completed(degraded));
  }

  private completed(degraded: ReadonlySet<string>): readonly ObjectStatus[] {
    if (!this.shared) return this.statuses;
    return withStoreHealth(this.statuses, this.policies, degraded);
  }

  private updateMetric(degraded: ReadonlySet<string>): void {
    if (this.metrics === undefined) return;
    this.metrics.rateLimitDegraded.reset();
    if (!this.shared) return;
    for (const policy of this.policies.keys())
      this.metrics.rateLimitDegraded.set({ policy }, degraded.has(policy) ? 1 : 0);
  }
}

/** Every limit routes carry, by policy name, with its failure mode (not invalid ones: they use no store). */
function failureModes(model: GatewayModel): Map<string, FailureMode> {
  const out = new Map<string, FailureMode>();
  for (const l of model.listeners)
    for (const v of l.virtualHosts)
      for (const r of v.routes)
        if (r.rateLimit && r.rateLimit.invalid === undefined)
          out.set(r.rateLimit.policy, r.rateLimit.failureMode);
  return out;
}
