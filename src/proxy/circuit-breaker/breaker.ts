/**
 * The counts a circuit breaker (model `CircuitBreaker`) and a client cap (model `ClientConcurrency`)
 * keep: plain integers the request path raises when a request is sent and lowers exactly once when it
 * ends, whatever way it ends (both fronts hold a `held` flag per request so a second end is a no-op).
 * Over a cap the caller answers 503 at once (Envoy's `x-envoy-overloaded`, here `x-gatehouse-overloaded`);
 * the refusal is counted here for the metrics and logged at most once per backend (or zone) and window.
 */
import { limitedLog } from "../../observability/log-limit.ts";

/** Which cap refused a request (the metric's `limit` label). */
export type BreakerLimit = "parallel_requests" | "parallel_retries";

/** Set on every answer a cap refused, as Envoy sets `x-envoy-overloaded`. */
export const OVERLOADED_HEADER = "x-gatehouse-overloaded";

/** The caps of one backend (Infinity: that count is not capped). */
export interface BreakerCaps {
  readonly maxParallelRequests: number;
  readonly maxParallelRetries: number;
}

/** One backend's in-flight counts in this process; kept across reloads by registry.ts. */
export class CircuitBreaker {
  requests = 0;
  retries = 0;
  /** Refusals so far by cap (metrics read them). */
  readonly rejected = { parallel_requests: 0, parallel_retries: 0 };

  constructor(
    readonly backendId: string,
    public caps: BreakerCaps,
  ) {}

  /** Counts a request about to be sent, or refuses it (false: answer 503, send nothing). */
  tryRequest(): boolean {
    if (this.requests >= this.caps.maxParallelRequests) {
      this.refuse("parallel_requests", this.caps.maxParallelRequests);
      return false;
    }
    this.requests++;
    return true;
  }

  endRequest(): void {
    if (this.requests > 0) this.requests--;
  }

  /** Counts a retry about to be made, or refuses it (false: no retry; the last outcome is answered). */
  tryRetry(): boolean {
    if (this.retries >= this.caps.maxParallelRetries) {
      this.refuse("parallel_retries", this.caps.maxParallelRetries);
      return false;
    }
    this.retries++;
    return true;
  }

  endRetry(): void {
    if (this.retries > 0) this.retries--;
  }

  private refuse(limit: BreakerLimit, cap: number): void {
    this.rejected[limit]++;
    limitedLog("warn", this.backendId, "circuit breaker refused a request", {
      backend: this.backendId,
      limit,
      cap,
      inFlight: limit === "parallel_requests" ? this.requests : this.retries,
    });
  }
}

/** One zone's requests in flight per client address (ingress-nginx `limit-connections`). */
export class ClientConcurrencyZone {
  private readonly counts = new Map<string, number>();
  /** Refusals so far (metrics read it). */
  rejected = 0;

  constructor(
    readonly zone: string,
    public limit: number,
  ) {}

  /** Counts one more request of `client`, or refuses it (false: answer 503, send nothing). */
  tryEnter(client: string): boolean {
    const n = this.counts.get(client) ?? 0;
    if (n >= this.limit) {
      this.rejected++;
      limitedLog("warn", this.zone, "limit-connections refused a request", {
        zone: this.zone,
        client,
        limit: this.limit,
      });
      return false;
    }
    this.counts.set(client, n + 1);
    return true;
  }

  leave(client: string): void {
    const n = (this.counts.get(client) ?? 1) - 1;
    if (n <= 0) this.counts.delete(client);
    else this.counts.set(client, n);
  }

  /** Clients with a request in flight (tests, /debug). */
  get clients(): number {
    return this.counts.size;
  }

  inFlight(client: string): number {
    return this.counts.get(client) ?? 0;
  }
}
