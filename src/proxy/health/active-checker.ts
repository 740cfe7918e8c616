/**
 * Active HTTP health checking of one backend's endpoints (model `ActiveHealthCheck`), from this process:
 * each endpoint is probed on its own timer, the next probe scheduled only when the last one has ended, so
 * there is never more than one probe per endpoint in flight, and at most one per interval. The first
 * probe of an endpoint comes at a random point of its first interval and each later one after the
 * interval plus up to a tenth of it at random, so many gateways and backends do not probe in step.
 * `unhealthyThreshold` failures in a row (a status not expected, no response headers within the
 * timeout, a refused connection or TLS) take the endpoint out of service through the backend's
 * OutlierDetector, which every picker already consults; `healthyThreshold` successes in a row bring it
 * back. An endpoint starts healthy (the EndpointSlice calls it ready). Endpoints that leave the backend
 * stop being probed; a backend whose policy no longer asks is stopped whole (active-registry.ts).
 */
import type { ActiveHealthCheck } from "../../model/index.ts";
import { type CompiledBackendTLS, tlsOrigin } from "../backend-tls/options.ts";
import type { OutlierDetector } from "./outlier-detector.ts";

/** A probe's outcome, as the metric labels it. */
export type ProbeResult = "success" | "failure" | "error";

interface EndpointProbe {
  failures: number;
  successes: number;
  healthy: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The last probe's status, or why it got none. */
  last: string;
  stopped: boolean;
}

const USER_AGENT = "gatehouse-health-check";

export class ActiveChecker {
  private readonly probes = new Map<string, EndpointProbe>();
  /** Probes by result since this backend was first checked, for metrics. */
  readonly totals: Record<ProbeResult, number> = { success: 0, failure: 0, error: 0 };

  constructor(
    readonly backendId: string,
    private config: ActiveHealthCheck,
    private tls: CompiledBackendTLS | undefined,
    private detector: OutlierDetector,
    bases: readonly string[],
  ) {
    this.update(config, tls, detector, bases);
  }

  /** A reload: new settings, and the endpoints now (new ones start probing, those gone stop). */
  update(
    config: ActiveHealthCheck,
    tls: CompiledBackendTLS | undefined,
    detector: OutlierDetector,
    bases: readonly string[],
  ): void {
    this.config = config;
    this.tls = tls;
    this.detector = detector;
    const now = new Set(bases);
    for (const [base, p] of this.probes)
      if (!now.has(base)) {
        this.stopProbe(p);
        this.probes.delete(base);
      }
    for (const base of bases) {
      const p = this.probes.get(base);
      if (p === undefined) {
        const made: EndpointProbe = {
          failures: 0,
          successes: 0,
          healthy: true,
          timer: undefined,
          last: "not probed yet",
          stopped: false,
        };
        this.probes.set(base, made);
        this.schedule(base, made, Math.random() * config.intervalMs);
      } else if (!p.healthy) detector.setActiveHealth(base, false, p.last);
    }
  }

  /** Stops every probe (the backend no longer asks for them). */
  stop(): void {
    for (const p of this.probes.values()) this.stopProbe(p);
    this.probes.clear();
  }

  /** What `/debug/health` shows: every endpoint probed, its state and last outcome. */
  report(): object {
    const c = this.config;
    return {
      probe: `${c.method} ${c.path}`,
      intervalMs: c.intervalMs,
      endpoints: [...this.probes].map(([endpoint, p]) => ({
        endpoint,
        healthy: p.healthy,
        failuresInARow: p.failures,
        successesInARow: p.successes,
        last: p.last,
      })),
      totals: { ...this.totals },
    };
  }

  private stopProbe(p: EndpointProbe): void {
    p.stopped = true;
    if (p.timer !== undefined) clearTimeout(p.timer);
    p.timer = undefined;
  }

  private schedule(base: string, p: EndpointProbe, ms: number): void {
    if (p.stopped) return;
    p.timer = setTimeout(() => {
      p.timer = undefined;
      void this.probe(base, p).finally(() => {
        const i = this.config.intervalMs;
        this.schedule(base, p, i + Math.random() * (i / 10));
      });
    }, ms);
    p.timer.unref?.();
  }

  private async probe(base: string, p: EndpointProbe): Promise<void> {
    const c = this.config;
    const tls = this.tls;
    let result: ProbeResult;
    let last: string;
    try {
      const res = await fetch((tls === undefined ? base : tlsOrigin(base)) + c.path, {
        method: c.method,
        headers: { "user-agent": USER_AGENT },
        redirect: "manual",
        signal: AbortSignal.timeout(c.timeoutMs),
        ...(tls !== undefined ? { tls: tls.fetch } : {}),
      } as RequestInit);
      // The body is not wanted: dropping it keeps a large or endless one from being read.
      void res.body?.cancel().catch(() => {});
      result = c.expectedStatuses.includes(res.status) ? "success" : "failure";
      last = `status ${res.status}`;
    } catch (err) {
      result = "error";
      const name = (err as { name?: string } | null)?.name;
      last =
        name === "TimeoutError"
          ? `no response within ${c.timeoutMs} ms`
          : `no response: ${String((err as { code?: unknown })?.code ?? (err as Error)?.message ?? err)}`;
    }
    if (p.stopped) return;
    this.totals[result]++;
    p.last = last;
    if (result === "success") {
      p.failures = 0;
      p.successes++;
      if (!p.healthy && p.successes >= c.healthyThreshold) {
        p.healthy = true;
        this.detector.setActiveHealth(base, true, `${p.successes} probes in a row passed (${last})`);
      }
    } else {
      p.successes = 0;
      p.failures++;
      if (p.healthy && p.failures >= c.unhealthyThreshold) {
        p.healthy = false;
        this.detector.setActiveHealth(base, false, `${p.failures} probes in a row failed (${last})`);
      }
    }
  }
}
