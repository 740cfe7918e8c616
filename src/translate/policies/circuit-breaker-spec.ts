/**
 * A BackendTrafficPolicy's `circuitBreaker`, with Envoy Gateway's field names (its CircuitBreaker type),
 * judged field by field. Gatehouse counts requests, retries and upstream connections per backend (and
 * connections per endpoint), on both fronts (src/proxy/circuit-breaker/):
 * - the raw front's own pool counts every connection it holds open, idle ones included, and closes one
 *   after `maxRequestsPerConnection` requests;
 * - Bun's fetch gives no hold on its pool, so the full request path (`--front bun`, and what the raw
 *   front relays) sends each request to such a backend on a connection of its own (no keep-alive) and
 *   counts it for as long as the request is in flight: connections are then requests in flight, and
 *   each carries one request (at most any `maxRequestsPerConnection`).
 * No request waits for a connection: one over a connection cap is answered 503 at once, so
 * `maxPendingRequests` is always met (a warning says so). Unlike Envoy (1024 each), a field left out is
 * no cap; an unknown or misspelt field makes the policy Invalid, naming it.
 */
import type { CircuitBreaker, SourceRef } from "../../model/index.ts";

/** What a policy's `circuitBreaker` sets (its source is added where it is applied). */
export type PolicyCircuitBreaker = Omit<CircuitBreaker, "source">;

const taken = [
  "maxParallelRequests",
  "maxParallelRetries",
  "maxPendingRequests",
  "maxConnections",
  "maxRequestsPerConnection",
] as const;
/** Envoy Gateway's range for each threshold. */
const MAX = 4_294_967_295;

/** `spec.circuitBreaker` read, or why it cannot be applied (one message naming the field). */
export function parseCircuitBreakerSpec(value: unknown): PolicyCircuitBreaker | string {
  const at = (f: string) => `spec.circuitBreaker.${f}`;
  if (!isObject(value)) return "spec.circuitBreaker: must be an object";
  const known = [...taken, "perEndpoint"];
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const near = known.find((f) => f.toLowerCase() === key.toLowerCase());
    return `${at(key)}: unknown field${near === undefined ? "" : ` (the field is spelt ${near})`}`;
  }
  const out: Record<string, unknown> = {};
  for (const f of taken) {
    const n = threshold(value[f], at(f), f === "maxRequestsPerConnection" ? 1 : 0);
    if (typeof n === "string") return n;
    if (n !== undefined) out[f] = n;
  }
  const per = value.perEndpoint;
  if (per !== undefined && per !== null) {
    if (!isObject(per)) return `${at("perEndpoint")}: must be an object`;
    for (const key of Object.keys(per))
      if (key !== "maxConnections") return `${at(`perEndpoint.${key}`)}: unknown field`;
    const n = threshold(per.maxConnections, at("perEndpoint.maxConnections"), 0);
    if (typeof n === "string") return n;
    if (n !== undefined) out.perEndpoint = { maxConnections: n };
  }
  return out as PolicyCircuitBreaker;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A threshold as Envoy Gateway bounds it. `maxRequestsPerConnection` must be at least 1 here: Envoy
 * reads 0 as no limit, which a policy says by leaving the field out.
 */
function threshold(n: unknown, where: string, min: number): number | undefined | string {
  if (n === undefined || n === null) return undefined;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > MAX)
    return `${where}: must be an integer from ${min} to ${MAX}, got ${JSON.stringify(n)}${
      min === 1 && n === 0 ? " (leave the field out for no limit)" : ""
    }`;
  return n;
}

/** The model's breaker, or undefined when the policy sets no threshold at all. */
export function circuitBreakerOf(p: PolicyCircuitBreaker, source: SourceRef): CircuitBreaker | undefined {
  return setsCaps(p) ? { source, ...p } : undefined;
}

/** Whether any threshold is set. */
export function setsCaps(p: PolicyCircuitBreaker): boolean {
  return taken.some((f) => p[f] !== undefined) || p.perEndpoint?.maxConnections !== undefined;
}

/** Why a breaker as read does less than it seems to, if it does (a warning on the policy). */
export function circuitBreakerWarning(p: PolicyCircuitBreaker): string | undefined {
  if (p.maxPendingRequests === undefined) return undefined;
  return "circuitBreaker.maxPendingRequests: no request waits for a connection here (one over a connection cap is answered 503 at once), so this cap is always met and never refuses a request";
}
