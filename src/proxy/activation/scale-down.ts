/**
 * Scale to zero (docs/scale-to-zero.md): on the elected leader only, a workload whose backend saw no
 * request for its `idlePeriod` (on any replica: Redis shares the last-request times, shared-activity.ts)
 * is scaled to 0. Never while this process has a request in flight or held for it, never within the
 * cooldown after a wake (against flapping), never when the gateway cannot know the other replicas'
 * traffic (`blocked`: several replicas and no Redis, said in the policy's condition).
 */
import { logger } from "../../observability/logger.ts";
import type { BackendActivator } from "./activator.ts";
import { allActivators, autoscalerConflict } from "./registry.ts";
import type { WorkloadScaler } from "./scaler.ts";

/** The last-request time of a backend on the other processes or replicas; undefined: not known now. */
export interface ActivitySource {
  lastActivity(backendId: string): Promise<number | undefined>;
}

const log = logger.child({ component: "activation" });

/** After a wake, no scale-down for this long (or the idle period, when shorter). */
const COOLDOWN_MS = 30_000;

export interface ScaleDownOptions {
  readonly scaler: WorkloadScaler;
  readonly isLeader: () => boolean;
  /** Where the other replicas' (Redis) or processes' (--workers) last-request times come from. */
  readonly shared?: ActivitySource;
  /** Why scaling down is off right now; undefined: it may happen. */
  readonly blocked: () => string | undefined;
  /** How often idle backends are looked for (default 1 s). */
  readonly everyMs?: number;
}

export class IdleScaleDown {
  readonly #opts: ScaleDownOptions;
  readonly #timer: ReturnType<typeof setInterval>;
  /** When each backend was last found scaled down, so it is not asked again until new traffic. */
  readonly #asleepSince = new Map<string, number>();
  #running = false;

  constructor(opts: ScaleDownOptions) {
    this.#opts = opts;
    this.#timer = setInterval(() => void this.tick(), opts.everyMs ?? 1_000);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One pass over the activated backends (the timer runs it; tests may call it). */
  async tick(): Promise<void> {
    if (this.#running || !this.#opts.isLeader() || this.#opts.blocked() !== undefined) return;
    this.#running = true;
    try {
      for (const a of allActivators()) await this.#consider(a);
    } finally {
      this.#running = false;
    }
  }

  async #consider(a: BackendActivator): Promise<void> {
    const c = a.config;
    if (c.scaler !== "Gateway" || c.minReplicas !== 0 || a.inflight > 0 || a.held > 0) return;
    if (autoscalerConflict(a.workload) !== undefined) return;
    const now = Date.now();
    if (now - a.lastWakeMs < Math.min(COOLDOWN_MS, c.idleMs)) return;
    let last = a.lastRequestMs;
    if (now - last < c.idleMs) return;
    if (this.#opts.shared !== undefined) {
      const shared = await this.#opts.shared.lastActivity(a.backendId);
      if (shared === undefined) return; // not answered: not idle as far as we know
      last = Math.max(last, shared);
      if (now - last < c.idleMs) return;
    }
    // Found at 0 since the last request anywhere (another replica may have woken it since): not asked again.
    const asleep = this.#asleepSince.get(a.backendId);
    if (asleep !== undefined && asleep >= last) return;
    const out = await this.#opts.scaler.scaleToZero(a.workload).catch((err: unknown) => ({
      ok: false as const,
      permanent: false,
      reason: String(err),
    }));
    if (!out.ok) {
      log.warn("could not scale an idle workload to zero", { backend: a.backendId, reason: out.reason });
      return;
    }
    this.#asleepSince.set(a.backendId, Date.now());
    if (out.changed) {
      a.totals.scaleDowns++;
      a.asleep();
      const w = a.workload;
      log.info("idle workload scaled to zero", {
        backend: a.backendId,
        workload: `${w.kind} ${w.namespace}/${w.name}`,
        idleMs: now - last,
      });
    }
  }
}
