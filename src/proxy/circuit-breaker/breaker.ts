/**
 * The counts a circuit breaker (model `CircuitBreaker`) and a client cap (model `ClientConcurrency`)
 * keep: plain integers the request path raises when a request is sent and lowers exactly once when it
 * ends, whatever way it ends (both fronts hold a `held` flag per request so a second end is a no-op).
 * Over a cap the caller answers 503 at once (Envoy's `x-envoy-overloaded`, here `x-gatehouse-overloaded`);
 * the refusal is counted here for the metrics and logged at most once per backend (or zone) and window.
 * Upstream connections are counted alike, per backend and per endpoint, when a connection cap is set:
 * from connect to close by the raw front's pool (raw-front/upstream/pool.ts), per attempt until its
 * response ends on the fetch path (request/forward.ts, which then opens one per request).
 */
import type { BlockList } from "node:net";
import { limitedLog } from "../../observability/log-limit.ts";
import { inSet } from "../../ratelimit/client-ip.ts";

/** Which cap refused a request (the metric's `limit` label). */
export type BreakerLimit = "parallel_requests" | "parallel_retries" | "connections" | "endpoint_connections";

/** Set on every answer a cap refused, as Envoy sets `x-envoy-overloaded`. */
export const OVERLOADED_HEADER = "x-gatehouse-overloaded";

/** The caps of one backend (Infinity: that count is not capped). */
export interface BreakerCaps {
  readonly maxParallelRequests: number;
  readonly maxParallelRetries: number;
  /** Upstream connections open to the backend, idle ones included (Envoy `max_connections`). */
  readonly maxConnections: number;
  /** The same per endpoint (Envoy `per_host_thresholds.max_connections`). */
  readonly maxEndpointConnections: number;
  /** Requests one upstream connection carries before it is closed (Envoy `max_requests_per_connection`). */
  readonly maxRequestsPerConnection: number;
}

const INF = Number.POSITIVE_INFINITY;

/** One backend's in-flight counts in this process; kept across reloads by registry.ts. */
export class CircuitBreaker {
  requests = 0;
  retries = 0;
  /** Upstream connections open (or opening) to the backend, and per endpoint (connection caps only). */
  connections = 0;
  readonly endpointConnections = new Map<string, number>();
  /** Refusals so far by cap (metrics read them). */
  readonly rejected = { parallel_requests: 0, parallel_retries: 0, connections: 0, endpoint_connections: 0 };

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

  /** Whether connections are counted at all (a cap on them, or on their reuse, is set). */
  get capsConnections(): boolean {
    const c = this.caps;
    return c.maxConnections !== INF || c.maxEndpointConnections !== INF || c.maxRequestsPerConnection !== INF;
  }

  /** Which connection cap a new connection to `endpoint` would pass (nothing is counted), if any. */
  roomFor(endpoint: string): "connections" | "endpoint_connections" | undefined {
    if (this.connections >= this.caps.maxConnections) return "connections";
    if ((this.endpointConnections.get(endpoint) ?? 0) >= this.caps.maxEndpointConnections)
      return "endpoint_connections";
    return undefined;
  }

  /** Counts a new connection to `endpoint`, or refuses it (false: answer 503, counted and logged). */
  tryConnect(endpoint: string): boolean {
    const full = this.roomFor(endpoint);
    if (full !== undefined) {
      this.refuse(full, full === "connections" ? this.caps.maxConnections : this.caps.maxEndpointConnections);
      return false;
    }
    this.connections++;
    this.endpointConnections.set(endpoint, (this.endpointConnections.get(endpoint) ?? 0) + 1);
    return true;
  }

  /** A connection counted by tryConnect closed (called once per connection). */
  endConnection(endpoint: string): void {
    if (this.connections > 0) this.connections--;
    const n = (this.endpointConnections.get(endpoint) ?? 1) - 1;
    if (n <= 0) this.endpointConnections.delete(endpoint);
    else this.endpointConnections.set(endpoint, n);
  }

  private refuse(limit: BreakerLimit, cap: number): void {
    this.rejected[limit]++;
    const inFlight =
      limit === "parallel_requests"
        ? this.requests
        : limit === "parallel_retries"
          ? this.retries
          : this.connections;
    limitedLog("warn", this.backendId, "circuit breaker refused a request", {
      backend: this.backendId,
      limit,
      cap,
      inFlight,
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
    /** Clients never counted (ingress-nginx `limit-allowlist`); undefined: none. */
    public exempt: BlockList | undefined = undefined,
  ) {}

  /** Whether `client` is allow-listed: neither counted nor refused. */
  exempts(client: string): boolean {
    return this.exempt !== undefined && inSet(this.exempt, client);
  }

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
