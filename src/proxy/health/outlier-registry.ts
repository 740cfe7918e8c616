/**
 * The outlier detectors of this process, one per backend id with passive health checking, kept across
 * compiles: every reload compiles a new table, and an ejected endpoint must stay ejected (and keep its
 * growing ejection time) through an unrelated change. compile() asks for each backend's detector and then
 * names the ids still configured; the others leave the registry (a table that still holds one keeps
 * using it until it is swapped out). Ejections, returns and refusals are logged; metrics read the totals.
 * One registry per process, as a process runs one GatewayServer (tests that start two in one process
 * share it: a backend id both configure shares one detector).
 */
import type { PassiveHealthCheck } from "../../model/index.ts";
import { logger } from "../../observability/logger.ts";
import { activeReport } from "./active-registry.ts";
import { OutlierDetector, type OutlierEvent } from "./outlier-detector.ts";

const detectors = new Map<string, OutlierDetector>();
const log = logger.child({ component: "outlier-detection" });

function logEvent(d: OutlierDetector, e: OutlierEvent): void {
  if (e.kind === "ejected")
    log.warn("endpoint ejected", {
      backend: d.backendId,
      endpoint: e.endpoint,
      ms: e.ms,
      reason: e.reason,
      ejected: d.ejectedCount,
    });
  else if (e.kind === "returned")
    log.info("ejected endpoint returned", { backend: d.backendId, endpoint: e.endpoint });
  else if (e.kind === "probe") {
    const fields = { backend: d.backendId, endpoint: e.endpoint, reason: e.reason };
    if (e.healthy) log.info("endpoint passed its health checks", fields);
    else log.warn("endpoint failed its health checks", fields);
  } else
    log.warn("endpoint not ejected", {
      backend: d.backendId,
      endpoint: e.endpoint,
      reason:
        e.reason === "last_endpoint"
          ? "it is the backend's last endpoint in service"
          : "the backend's maxEjectionPercent is reached",
    });
}

/** The detector of backend `id`, created or brought up to date with `config` and `bases`. */
export function outlierDetectorFor(
  id: string,
  config: PassiveHealthCheck,
  bases: readonly string[],
): OutlierDetector {
  const d = detectors.get(id);
  if (d !== undefined) {
    d.update(config, bases);
    return d;
  }
  const made = new OutlierDetector(id, config, bases, logEvent);
  detectors.set(id, made);
  return made;
}

/** After a compile: detectors of backends no longer checked leave the registry. */
export function keepOutlierDetectors(ids: ReadonlySet<string>): void {
  for (const id of detectors.keys()) if (!ids.has(id)) detectors.delete(id);
}

/** Every detector, for the metrics (observability/outlier-metrics.ts). */
export function outlierDetectors(): Iterable<OutlierDetector> {
  return detectors.values();
}

/**
 * What `/debug/health` shows: every checked backend of this process, its ejected endpoints and totals,
 * and with active checks each endpoint's probe state.
 */
export function outlierReport(): object[] {
  return [...detectors.values()].map((d) => {
    const active = activeReport(d.backendId);
    return {
      backend: d.backendId,
      endpoints: d.endpointCount,
      ejected: d.ejected(),
      ejectionsTotal: d.ejectionsTotal,
      refusedTotal: { ...d.refusedTotal },
      ...(active !== undefined ? { active } : {}),
    };
  });
}
