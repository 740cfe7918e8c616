/**
 * Passive and active health checking in Prometheus (docs/load-balancing.md, Health): read from the outlier detectors
 * (and active checkers) at scrape time, so the data plane only bumps plain integers. Label values are backend ids
 * (configuration), never anything a client sends. With `--workers`, each process ejects on what it sees
 * and the primary's /metrics adds the processes up.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { activeCheckers } from "../proxy/health/active-registry.ts";
import { outlierDetectors } from "../proxy/health/outlier-registry.ts";

export function registerOutlierMetrics(registry: Registry): void {
  const ejections: Counter<"backend"> = new Counter({
    name: "gatehouse_outlier_ejections_total",
    help: "Endpoints ejected by passive health checking (a BackendTrafficPolicy's healthCheck.passive), by backend.",
    labelNames: ["backend"] as const,
    registers: [registry],
    collect: () => {
      ejections.reset();
      for (const d of outlierDetectors()) ejections.inc({ backend: d.backendId }, d.ejectionsTotal);
    },
  });
  const refused: Counter<"backend" | "reason"> = new Counter({
    name: "gatehouse_outlier_ejections_refused_total",
    help: "Ejections decided on but not made, by backend and reason (last_endpoint: it was the backend's last endpoint in service; max_percent: maxEjectionPercent reached).",
    labelNames: ["backend", "reason"] as const,
    registers: [registry],
    collect: () => {
      refused.reset();
      for (const d of outlierDetectors())
        for (const [reason, n] of Object.entries(d.refusedTotal))
          refused.inc({ backend: d.backendId, reason }, n);
    },
  });
  const ejected: Gauge<"backend"> = new Gauge({
    name: "gatehouse_outlier_ejected_endpoints",
    help: "Endpoints out of service right now (taking no traffic): ejected by passive health checking, or failing active health checks; by backend.",
    labelNames: ["backend"] as const,
    registers: [registry],
    collect: () => {
      ejected.reset();
      for (const d of outlierDetectors()) ejected.set({ backend: d.backendId }, d.ejectedCount);
    },
  });
  const probes: Counter<"backend" | "result"> = new Counter({
    name: "gatehouse_health_checks_total",
    help: "Active health check probes sent by this process (a BackendTrafficPolicy's healthCheck.active), by backend and result (success: an expected status; failure: another status; error: no response in time, refused connection or TLS).",
    labelNames: ["backend", "result"] as const,
    registers: [registry],
    collect: () => {
      probes.reset();
      for (const c of activeCheckers())
        for (const [result, n] of Object.entries(c.totals)) probes.inc({ backend: c.backendId, result }, n);
    },
  });
}
