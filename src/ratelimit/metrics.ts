/**
 * Store health for Prometheus, read at scrape time from the limiter: whether the shared store is up
 * (0 means failure modes are in effect), the replica count failure mode Local divides by, and the store
 * round trips made for checks (the bench compares it with requests: at most one per request).
 */
import type { Registry } from "prom-client";
import type { Limiter } from "./limiter.ts";

type Sample = { value: number };

function gauge(name: string, help: string, type: "gauge" | "counter", read: () => number) {
  return {
    name,
    help,
    type,
    aggregator: "sum" as const,
    get: async () => ({
      name,
      help,
      type,
      aggregator: "sum" as const,
      values: [{ value: read() }] as Sample[],
    }),
  };
}

/** Register (replacing any earlier limiter's) the store metrics on `registry`. */
export function registerLimiterMetrics(registry: Registry, limiter: Limiter): void {
  const metrics = [
    gauge(
      "gatehouse_ratelimit_store_up",
      "1 while the rate limit store answers, 0 while failure modes apply.",
      "gauge",
      () => (limiter.isUp() ? 1 : 0),
    ),
    gauge(
      "gatehouse_ratelimit_store_replicas",
      "Gateway replicas sharing the rate limit store (last known).",
      "gauge",
      () => limiter.replicas(),
    ),
    gauge(
      "gatehouse_ratelimit_store_commands_total",
      "Rate limit checks sent to the store (one per checked request).",
      "counter",
      () => limiter.stats().commands,
    ),
    gauge(
      "gatehouse_ratelimit_store_round_trips_total",
      "Script calls made to the store for checks (the checks of one event-loop turn share one).",
      "counter",
      () => limiter.stats().roundTrips,
    ),
    gauge(
      "gatehouse_ratelimit_store_failures_total",
      "Rate limit checks the store could not answer in time.",
      "counter",
      () => limiter.stats().failures,
    ),
  ];
  for (const m of metrics) {
    registry.removeSingleMetric(m.name);
    registry.registerMetric(m as never);
  }
}
