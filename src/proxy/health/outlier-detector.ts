/**
 * Passive health checking of one backend's endpoints (model `PassiveHealthCheck`), as Envoy's outlier
 * detection does it: every attempt's outcome is reported by endpoint base (`http://ip:port`); an endpoint
 * with enough consecutive errors is ejected (the pickers and `nextEndpoint` skip it) for the base time
 * times its number of ejections, capped; a timer brings it back. Ejection never takes the backend's last
 * usable endpoint, nor more than `maxEjectionPercent` of them (one may always be, as in Envoy): a backend
 * whose endpoints all fail keeps being tried and answers as it does today (502, 503, 504).
 *
 * Cost when nothing fails: a success reads `failing` (0) and returns; the pickers read `ejectedCount`.
 * State is kept per backend id across reloads (outlier-registry.ts), so a configuration change does not
 * forgive an ejected endpoint.
 */
import type { PassiveHealthCheck } from "../../model/index.ts";

/** An attempt that got no response: refused, reset, timed out, TLS refused, unreadable head. */
export const LOCAL_FAILURE = -1;

/** Envoy's max_ejection_time default: no ejection lasts longer (unless the base time is longer). */
export const MAX_EJECTION_MS = 300_000;

/** How long the `n`-th ejection (decayed) lasts: n times the base, capped at 300 s or the base if longer. */
export function ejectionMs(baseMs: number, n: number): number {
  return Math.min(baseMs * n, Math.max(MAX_EJECTION_MS, baseMs));
}

interface EndpointHealth {
  /** Consecutive 5xx (and local failures unless split). */
  errors5xx: number;
  /** Consecutive 502/503/504 (and local failures unless split). */
  gatewayErrors: number;
  /** Consecutive local failures (split only). */
  localFailures: number;
  /** Ejections so far, less one per interval in service: the next ejection lasts this + 1 base times. */
  ejections: number;
  /** `performance.now()` when the current ejection ends; 0: in service. */
  ejectedUntil: number;
  /** When it last came back (the decay of `ejections` counts from there). */
  returnedAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Failing active health checks (active-checker.ts): out of service until the probes pass again. */
  activeDown: boolean;
}

/** What happened, for logs and metrics (outlier-registry.ts hands them on). */
export type OutlierEvent =
  | { readonly kind: "ejected"; readonly endpoint: string; readonly ms: number; readonly reason: string }
  | { readonly kind: "returned"; readonly endpoint: string }
  | { readonly kind: "probe"; readonly endpoint: string; readonly healthy: boolean; readonly reason: string }
  | { readonly kind: "refused"; readonly endpoint: string; readonly reason: "last_endpoint" | "max_percent" };

export class OutlierDetector {
  /**
   * Endpoints out of service now (of the current `bases`): ejected, or failing active checks. The hot
   * path reads only this.
   */
  ejectedCount = 0;
  /** Endpoints with a nonzero error count: 0 lets a success return at once. */
  private failing = 0;
  private readonly states = new Map<string, EndpointHealth>();
  private bases: ReadonlySet<string>;
  /** Totals since this backend was first checked, for metrics: ejections, and ejections refused by why. */
  ejectionsTotal = 0;
  readonly refusedTotal = { last_endpoint: 0, max_percent: 0 };

  constructor(
    readonly backendId: string,
    private config: PassiveHealthCheck,
    bases: readonly string[],
    private readonly onEvent: (d: OutlierDetector, e: OutlierEvent) => void = () => {},
  ) {
    this.bases = new Set(bases);
  }

  /** A new configuration or endpoint list (a reload): endpoints that left are forgotten. */
  update(config: PassiveHealthCheck, bases: readonly string[]): void {
    this.config = config;
    this.bases = new Set(bases);
    for (const [base, s] of this.states)
      if (!this.bases.has(base)) {
        if (s.timer !== undefined) clearTimeout(s.timer);
        this.states.delete(base);
      }
    this.recount();
  }

  /** How many endpoints the backend has now. */
  get endpointCount(): number {
    return this.bases.size;
  }

  /** Whether `base` takes no traffic now. Callers check `ejectedCount > 0` first. */
  isEjected(base: string): boolean {
    const s = this.states.get(base);
    return s !== undefined && (s.ejectedUntil > 0 || s.activeDown);
  }

  /**
   * The active checker's verdict on `base` (active-checker.ts). Unlike an ejection it may take the last
   * endpoint: with none in service, the pickers fall back to all of them (Envoy's panic mode).
   */
  setActiveHealth(base: string, healthy: boolean, reason: string): void {
    if (!this.bases.has(base)) return;
    const s = this.stateOf(base);
    if (s.activeDown === !healthy) return;
    s.activeDown = !healthy;
    if (s.ejectedUntil === 0) this.ejectedCount += healthy ? -1 : 1;
    this.onEvent(this, { kind: "probe", endpoint: base, healthy, reason });
  }

  /** An attempt to `base` ended: `status` is the response's, or LOCAL_FAILURE. */
  report(base: string, status: number): void {
    if (status > 0 && status < 500) {
      if (this.failing === 0) return;
      const s = this.states.get(base);
      if (s !== undefined && s.errors5xx + s.gatewayErrors + s.localFailures > 0) this.clear(s);
      return;
    }
    if (!this.bases.has(base)) return;
    const s = this.stateOf(base);
    if (s.ejectedUntil > 0) return;
    const c = this.config;
    const wasClean = s.errors5xx + s.gatewayErrors + s.localFailures === 0;
    let reason: string | undefined;
    if (status === LOCAL_FAILURE && c.splitExternalLocalOriginErrors) {
      s.localFailures++;
      if (c.consecutiveLocalOriginFailures > 0 && s.localFailures >= c.consecutiveLocalOriginFailures)
        reason = `${s.localFailures} consecutive connect failures`;
    } else {
      // A response proves the connection: with the split, local failures start over.
      if (status !== LOCAL_FAILURE) s.localFailures = 0;
      s.errors5xx++;
      if (status === LOCAL_FAILURE || status === 502 || status === 503 || status === 504) s.gatewayErrors++;
      else s.gatewayErrors = 0;
      if (c.consecutive5xxErrors > 0 && s.errors5xx >= c.consecutive5xxErrors)
        reason = `${s.errors5xx} consecutive 5xx or connect failures`;
      else if (c.consecutiveGatewayErrors > 0 && s.gatewayErrors >= c.consecutiveGatewayErrors)
        reason = `${s.gatewayErrors} consecutive gateway errors (502, 503, 504 or connect failures)`;
    }
    if (wasClean && s.errors5xx + s.gatewayErrors + s.localFailures > 0) this.failing++;
    if (reason !== undefined) this.eject(base, s, reason);
  }

  /** The endpoints ejected now, with when each returns (ms from now), for /debug and the dashboard. */
  ejected(): { endpoint: string; returnsInMs: number; ejections: number }[] {
    const now = performance.now();
    const out: { endpoint: string; returnsInMs: number; ejections: number }[] = [];
    for (const [endpoint, s] of this.states)
      if (s.ejectedUntil > 0)
        out.push({
          endpoint,
          returnsInMs: Math.max(0, Math.round(s.ejectedUntil - now)),
          ejections: s.ejections,
        });
    return out;
  }

  private eject(base: string, s: EndpointHealth, reason: string): void {
    // Envoy resets the count after an ejection is decided on, whether or not it happens.
    this.clear(s);
    const n = this.bases.size;
    if (this.ejectedCount + 1 >= n) {
      this.refuse(base, "last_endpoint");
      return;
    }
    // Envoy's test: the share ejected before this one is under the cap (or none is ejected yet).
    if (this.ejectedCount > 0 && (this.ejectedCount * 100) / n >= this.config.maxEjectionPercent) {
      this.refuse(base, "max_percent");
      return;
    }
    const now = performance.now();
    const c = this.config;
    const inService = s.returnedAt > 0 ? Math.floor((now - s.returnedAt) / Math.max(1, c.intervalMs)) : 0;
    s.ejections = Math.max(0, s.ejections - inService) + 1;
    const ms = ejectionMs(c.baseEjectionMs, s.ejections);
    s.ejectedUntil = now + ms;
    if (!s.activeDown) this.ejectedCount++;
    this.ejectionsTotal++;
    s.timer = setTimeout(() => this.restore(base, s), ms);
    s.timer.unref?.();
    this.onEvent(this, { kind: "ejected", endpoint: base, ms, reason });
  }

  private refuse(base: string, reason: "last_endpoint" | "max_percent"): void {
    this.refusedTotal[reason]++;
    this.onEvent(this, { kind: "refused", endpoint: base, reason });
  }

  private restore(base: string, s: EndpointHealth): void {
    s.timer = undefined;
    if (s.ejectedUntil === 0) return;
    s.ejectedUntil = 0;
    s.returnedAt = performance.now();
    if (this.states.get(base) === s && !s.activeDown) this.ejectedCount = Math.max(0, this.ejectedCount - 1);
    this.onEvent(this, { kind: "returned", endpoint: base });
  }

  private clear(s: EndpointHealth): void {
    if (s.errors5xx + s.gatewayErrors + s.localFailures > 0) this.failing = Math.max(0, this.failing - 1);
    s.errors5xx = 0;
    s.gatewayErrors = 0;
    s.localFailures = 0;
  }

  private stateOf(base: string): EndpointHealth {
    let s = this.states.get(base);
    if (s === undefined) {
      s = {
        errors5xx: 0,
        gatewayErrors: 0,
        localFailures: 0,
        ejections: 0,
        ejectedUntil: 0,
        returnedAt: 0,
        timer: undefined,
        activeDown: false,
      };
      this.states.set(base, s);
    }
    return s;
  }

  private recount(): void {
    let ejected = 0;
    let failing = 0;
    for (const s of this.states.values()) {
      if (s.ejectedUntil > 0 || s.activeDown) ejected++;
      if (s.errors5xx + s.gatewayErrors + s.localFailures > 0) failing++;
    }
    this.ejectedCount = ejected;
    this.failing = failing;
  }
}
