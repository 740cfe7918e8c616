/**
 * The circuit breakers and client zones of this process, one per backend id (or zone name), kept across
 * compiles as the outlier detectors are (health/outlier-registry.ts): a reload must not forget the
 * requests in flight, or every reload would open the caps by as many. compile() asks for each one and
 * then names those still configured; the others leave (a request still holding one lowers its count on
 * the object it raised). Refusal totals outlive their breaker, so the counter never goes back.
 */
import type { CircuitBreaker as BreakerConfig, ClientConcurrency } from "../../model/index.ts";
import { cidrSet } from "../../ratelimit/client-ip.ts";
import { CircuitBreaker, ClientConcurrencyZone } from "./breaker.ts";

const breakers = new Map<string, CircuitBreaker>();
const zones = new Map<string, ClientConcurrencyZone>();
/** Refusals of breakers no longer configured, by `backend\0limit`; of zones, by zone. */
const retired = new Map<string, number>();
const retiredZones = new Map<string, number>();

const cap = (n: number | undefined) => n ?? Number.POSITIVE_INFINITY;

/** The breaker of backend `id`, or none when `config` caps nothing (maxPendingRequests alone does not:
 * no request waits for a connection here). */
export function breakerOf(id: string, config: BreakerConfig | undefined): CircuitBreaker | undefined {
  if (config === undefined) return undefined;
  const {
    maxParallelRequests: r,
    maxParallelRetries: t,
    maxConnections: c,
    maxRequestsPerConnection: n,
  } = config;
  const caps = [r, t, c, n, config.perEndpoint?.maxConnections].some((v) => v !== undefined);
  return caps ? circuitBreakerFor(id, config) : undefined;
}

/** The breaker of backend `id`, made or brought up to date with `config`. */
export function circuitBreakerFor(id: string, config: BreakerConfig): CircuitBreaker {
  const caps = {
    maxParallelRequests: cap(config.maxParallelRequests),
    maxParallelRetries: cap(config.maxParallelRetries),
    maxConnections: cap(config.maxConnections),
    maxEndpointConnections: cap(config.perEndpoint?.maxConnections),
    maxRequestsPerConnection: cap(config.maxRequestsPerConnection),
  };
  const b = breakers.get(id);
  if (b !== undefined) {
    b.caps = caps;
    return b;
  }
  const made = new CircuitBreaker(id, caps);
  breakers.set(id, made);
  return made;
}

/** The zone named in `config`, made or given its new limit. */
export function clientZoneFor(config: ClientConcurrency): ClientConcurrencyZone {
  const z = zones.get(config.zone);
  if (z !== undefined) {
    z.limit = config.limit;
    z.exempt = cidrSet(config.exemptCIDRs ?? []);
    return z;
  }
  const made = new ClientConcurrencyZone(config.zone, config.limit, cidrSet(config.exemptCIDRs ?? []));
  zones.set(config.zone, made);
  return made;
}

/** After a compile: breakers and zones no longer configured leave (their refusals are kept). */
export function keepCircuitBreakers(backendIds: ReadonlySet<string>, zoneNames: ReadonlySet<string>): void {
  for (const [id, b] of breakers)
    if (!backendIds.has(id)) {
      breakers.delete(id);
      for (const [limit, n] of Object.entries(b.rejected)) retire(id, limit, n);
    }
  for (const [name, z] of zones)
    if (!zoneNames.has(name)) {
      zones.delete(name);
      if (z.rejected > 0) retiredZones.set(name, (retiredZones.get(name) ?? 0) + z.rejected);
    }
}

function retire(name: string, limit: string, n: number): void {
  if (n === 0) return;
  const key = `${name}\u0000${limit}`;
  retired.set(key, (retired.get(key) ?? 0) + n);
}

/** Refusals so far, by backend and cap, retired breakers' included (metrics). */
export function breakerRejections(): { backend: string; limit: string; n: number }[] {
  const totals = new Map(retired);
  for (const b of breakers.values())
    for (const [limit, n] of Object.entries(b.rejected)) {
      const key = `${b.backendId}\u0000${limit}`;
      totals.set(key, (totals.get(key) ?? 0) + n);
    }
  return [...totals].map(([key, n]) => {
    const [backend, limit] = key.split("\u0000") as [string, string];
    return { backend, limit, n };
  });
}

/** Refusals so far by zone, retired zones' included (metrics). */
export function zoneRejections(): Map<string, number> {
  const out = new Map(retiredZones);
  for (const z of zones.values()) out.set(z.zone, (out.get(z.zone) ?? 0) + z.rejected);
  return out;
}

/** Every configured breaker (metrics: requests in flight). */
export function circuitBreakers(): Iterable<CircuitBreaker> {
  return breakers.values();
}
