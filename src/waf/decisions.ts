/**
 * `gatehouse_waf_decisions_total{route,action}`: counted in plain integers per route (a labelled
 * prom-client inc per request costs more than the count) and read at scrape time. Route names come from
 * configuration, actions from the fixed set below, so the series are bounded.
 */
import type { Registry } from "prom-client";

/**
 * - `pass`: inspected, nothing to act on;
 * - `block`: answered with the engine's status (403 for CRS);
 * - `redirect`: answered with the engine's redirect;
 * - `detected`: detection-only mode, the engine would have blocked; passed;
 * - `too_large`: a body over the inspection limit in `Reject` mode (413);
 * - `unavailable`: the WAF cannot run (library absent, rule set refused, invalid policy, its worker
 *   stopped; 503);
 * - `overloaded`: the engine's queue was full (`--waf-queue-limit`; 503 with Retry-After).
 */
export type WafAction =
  | "pass"
  | "block"
  | "redirect"
  | "detected"
  | "too_large"
  | "unavailable"
  | "overloaded";

const counts = new Map<string, Map<WafAction, number>>();
/** Times the engine's worker stopped without being asked (engine-queue.ts restarts it). */
let workerRestarts = 0;

export function countWorkerRestart(): void {
  workerRestarts++;
}

/** The count so far (tests). */
export function wafWorkerRestarts(): number {
  return workerRestarts;
}

export function countWafDecision(route: string, action: WafAction): void {
  let byAction = counts.get(route);
  if (byAction === undefined) {
    byAction = new Map();
    counts.set(route, byAction);
  }
  byAction.set(action, (byAction.get(action) ?? 0) + 1);
}

/** The count so far (tests). */
export function wafDecisions(route: string, action: WafAction): number {
  return counts.get(route)?.get(action) ?? 0;
}

const name = "gatehouse_waf_decisions_total";
const restartsName = "gatehouse_waf_worker_restarts_total";

/** Register (replacing earlier ones) the decisions and worker restarts counters on `registry`. */
export function registerWafMetrics(registry: Registry): void {
  const metric = {
    name,
    help: "WAF decisions by route and action (pass, block, redirect, detected, too_large, unavailable, overloaded).",
    type: "counter" as const,
    aggregator: "sum" as const,
    get: async () => {
      const values: { labels: Record<string, string>; value: number }[] = [];
      for (const [route, byAction] of counts)
        for (const [action, value] of byAction) values.push({ labels: { route, action }, value });
      return { name, help: metric.help, type: metric.type, aggregator: metric.aggregator, values };
    },
  };
  registry.removeSingleMetric(name);
  registry.registerMetric(metric as never);
  const restarts = {
    name: restartsName,
    help: "Times the WAF engine's worker stopped unasked and was restarted (its requests answered 503).",
    type: "counter" as const,
    aggregator: "sum" as const,
    get: async () => ({
      name: restartsName,
      help: restarts.help,
      type: restarts.type,
      aggregator: restarts.aggregator,
      values: [{ labels: {}, value: workerRestarts }],
    }),
  };
  registry.removeSingleMetric(restartsName);
  registry.registerMetric(restarts as never);
}
