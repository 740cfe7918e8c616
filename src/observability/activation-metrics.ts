/**
 * Activation (docs/scale-to-zero.md) in Prometheus: the load an autoscaler scales on (requests in flight
 * and the request count per activated backend; a rate() of the counter is the request rate) and how
 * held requests fare. Read from the activators at scrape time; label values are backend ids
 * (configuration). With `--workers`, the primary's /metrics adds the processes up.
 *
 * Beside `backend` (`namespace/service:port`) each series names its Service in two more labels: a
 * Kubernetes label selector cannot hold `/` or `:`, and the Prometheus adapter maps a series to the
 * Service an HPA's Object metric describes by label (deploy/autoscaling/hpa/).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { BackendActivator } from "../proxy/activation/activator.ts";
import { allActivators } from "../proxy/activation/registry.ts";

const labelNames = ["backend", "backend_namespace", "backend_service"] as const;
type Labels = (typeof labelNames)[number];

function labels(a: BackendActivator): Record<Labels, string> {
  return { backend: a.backendId, backend_namespace: a.service.namespace, backend_service: a.service.name };
}

export function registerActivationMetrics(registry: Registry): void {
  const inflight: Gauge<Labels> = new Gauge({
    name: "gatehouse_backend_inflight",
    help: "Requests forwarded to an activated backend (ScaleToZeroPolicy) and not answered yet, by backend.",
    labelNames,
    registers: [registry],
    collect: () => {
      inflight.reset();
      for (const a of allActivators()) inflight.set(labels(a), a.inflight);
    },
  });
  const requests: Counter<Labels> = new Counter({
    name: "gatehouse_backend_requests_total",
    help: "Requests forwarded to an activated backend (held ones once released), by backend; its rate() is the load to scale on.",
    labelNames,
    registers: [registry],
    collect: () => {
      requests.reset();
      for (const a of allActivators()) requests.inc(labels(a), a.totals.requests);
    },
  });
  const held: Gauge<Labels> = new Gauge({
    name: "gatehouse_backend_held_requests",
    help: "Requests held right now while an activated backend's workload wakes, by backend.",
    labelNames,
    registers: [registry],
    collect: () => {
      held.reset();
      for (const a of allActivators()) held.set(labels(a), a.held);
    },
  });
  const outcomes: Counter<Labels | "outcome"> = new Counter({
    name: "gatehouse_backend_hold_outcomes_total",
    help: "Held requests by backend and outcome (released: sent on when endpoints appeared; timeout: 503 after maxHoldTime; overflow: 503, queue full; refused: 503, the workload cannot be woken).",
    labelNames: [...labelNames, "outcome"] as const,
    registers: [registry],
    collect: () => {
      outcomes.reset();
      for (const a of allActivators()) {
        const t = a.totals;
        outcomes.inc({ ...labels(a), outcome: "released" }, t.released);
        outcomes.inc({ ...labels(a), outcome: "timeout" }, t.timedOut);
        outcomes.inc({ ...labels(a), outcome: "overflow" }, t.overflowed);
        outcomes.inc({ ...labels(a), outcome: "refused" }, t.refused);
      }
    },
  });
  const activations: Counter<Labels | "direction"> = new Counter({
    name: "gatehouse_backend_activations_total",
    help: "Scale writes this process made for an activated backend's workload, by backend and direction (up: 0 to 1; down: to 0, leader only).",
    labelNames: [...labelNames, "direction"] as const,
    registers: [registry],
    collect: () => {
      activations.reset();
      for (const a of allActivators()) {
        activations.inc({ ...labels(a), direction: "up" }, a.totals.activations);
        activations.inc({ ...labels(a), direction: "down" }, a.totals.scaleDowns);
      }
    },
  });
}
