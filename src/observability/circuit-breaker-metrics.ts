/**
 * Circuit breaking in Prometheus (docs/traffic-policy.md): read from the breakers at scrape time, so the
 * request path only bumps plain integers. Label values are backend ids and zone names (configuration),
 * never anything a client sends. With `--workers`, each process counts its own (as each Envoy does).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { breakerRejections, circuitBreakers, zoneRejections } from "../proxy/circuit-breaker/registry.ts";

export function registerCircuitBreakerMetrics(registry: Registry): void {
  const rejected: Counter<"backend" | "limit"> = new Counter({
    name: "gatehouse_circuit_breaker_rejections_total",
    help: "Requests answered 503 (or retries not made) because a BackendTrafficPolicy circuitBreaker cap was reached, by backend and cap (parallel_requests, parallel_retries, connections, endpoint_connections).",
    labelNames: ["backend", "limit"] as const,
    registers: [registry],
    collect: () => {
      rejected.reset();
      for (const r of breakerRejections()) rejected.inc({ backend: r.backend, limit: r.limit }, r.n);
    },
  });
  const inFlight: Gauge<"backend"> = new Gauge({
    name: "gatehouse_circuit_breaker_requests_in_flight",
    help: "Requests in flight right now to each backend with a circuitBreaker, in this process.",
    labelNames: ["backend"] as const,
    registers: [registry],
    collect: () => {
      inFlight.reset();
      for (const b of circuitBreakers()) inFlight.set({ backend: b.backendId }, b.requests);
    },
  });
  const connections: Gauge<"backend"> = new Gauge({
    name: "gatehouse_circuit_breaker_connections",
    help: "Upstream connections open right now to each backend whose circuitBreaker caps connections (idle ones included), in this process.",
    labelNames: ["backend"] as const,
    registers: [registry],
    collect: () => {
      connections.reset();
      for (const b of circuitBreakers())
        if (b.capsConnections) connections.set({ backend: b.backendId }, b.connections);
    },
  });
  const client: Counter<"zone"> = new Counter({
    name: "gatehouse_client_concurrency_rejections_total",
    help: "Requests answered 503 because their client had too many in flight (ingress-nginx limit-connections), by zone (the Ingress).",
    labelNames: ["zone"] as const,
    registers: [registry],
    collect: () => {
      client.reset();
      for (const [zone, n] of zoneRejections()) client.inc({ zone }, n);
    },
  });
}
