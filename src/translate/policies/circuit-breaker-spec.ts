/**
 * A BackendTrafficPolicy's `circuitBreaker`, with Envoy Gateway's field names (its CircuitBreaker type),
 * judged field by field. Gatehouse counts requests and retries in flight per backend, on both fronts
 * (src/proxy/circuit-breaker/); what it cannot cap is refused by name, never taken and ignored:
 * - `maxConnections` and `perEndpoint.maxConnections`: the raw front's pool and Bun's fetch open a
 *   connection for each request in flight when no idle one is free, and keep idle ones; neither caps
 *   them (maxParallelRequests bounds the connections busy at once);
 * - `maxRequestsPerConnection`: Bun's fetch gives no hold on how often it reuses a connection.
 * `maxPendingRequests` is taken: no request waits for a connection here, so the cap is always met (a
 * warning says so). Unlike Envoy (1024 each), a field left out is no cap.
 */
import type { CircuitBreaker, SourceRef } from "../../model/index.ts";

/** What a policy's `circuitBreaker` sets (its source is added where it is applied). */
export type PolicyCircuitBreaker = Omit<CircuitBreaker, "source">;

const taken = ["maxParallelRequests", "maxParallelRetries", "maxPendingRequests"] as const;
const refused: Readonly<Record<string, string>> = {
  maxConnections:
    "caps on upstream connections are not implemented (idle connections are kept apart from any cap; maxParallelRequests bounds the connections in use)",
  maxRequestsPerConnection:
    "a cap on requests per upstream connection is not implemented (Bun's fetch, one of the two fronts' clients, gives no hold on connection reuse)",
  perEndpoint: "caps per endpoint are not implemented (the caps here are per backend)",
};
/** Envoy Gateway's range for each threshold. */
const MAX = 4_294_967_295;

/** `spec.circuitBreaker` read, or why it cannot be applied (one message naming the field). */
export function parseCircuitBreakerSpec(value: unknown): PolicyCircuitBreaker | string {
  const at = (f: string) => `spec.circuitBreaker.${f}`;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return "spec.circuitBreaker: must be an object";
  const v = value as Record<string, unknown>;
  for (const key of Object.keys(v)) {
    if ((taken as readonly string[]).includes(key)) continue;
    const why = refused[key];
    if (why !== undefined) return `${at(key)}: ${why}`;
    const near = taken.find((f) => f.toLowerCase() === key.toLowerCase());
    return `${at(key)}: unknown field${near === undefined ? "" : ` (the field is spelt ${near})`}`;
  }
  const out: Record<string, number> = {};
  for (const f of taken) {
    const n = v[f];
    if (n === undefined || n === null) continue;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX)
      return `${at(f)}: must be an integer from 0 to ${MAX}, got ${JSON.stringify(n)}`;
    out[f] = n;
  }
  return out as PolicyCircuitBreaker;
}

/** The model's breaker, or undefined when the policy sets no threshold at all. */
export function circuitBreakerOf(p: PolicyCircuitBreaker, source: SourceRef): CircuitBreaker | undefined {
  return setsCaps(p) ? { source, ...p } : undefined;
}

/** Whether any threshold is set. */
export function setsCaps(p: PolicyCircuitBreaker): boolean {
  return taken.some((f) => p[f] !== undefined);
}

/** Why a breaker as read does less than it seems to, if it does (a warning on the policy). */
export function circuitBreakerWarning(p: PolicyCircuitBreaker): string | undefined {
  if (p.maxPendingRequests === undefined) return undefined;
  return "circuitBreaker.maxPendingRequests: no request waits for a connection here (a new one is opened at once), so this cap is always met and never refuses a request";
}
