/**
 * The active checkers of this process, one per backend id whose policy asks for probes, kept across
 * compiles as the outlier detectors are (outlier-registry.ts): a reload must neither restart every
 * endpoint's count nor probe twice. compile() asks for each backend's checker and then names the ids
 * still configured; the others are stopped (their timers cleared) and leave.
 */
import type { ActiveHealthCheck } from "../../model/index.ts";
import type { CompiledBackendTLS } from "../backend-tls/options.ts";
import { ActiveChecker } from "./active-checker.ts";
import type { OutlierDetector } from "./outlier-detector.ts";

const checkers = new Map<string, ActiveChecker>();

/** The checker of backend `id`, started or brought up to date; its verdicts go to `detector`. */
export function activeCheckerFor(
  id: string,
  config: ActiveHealthCheck,
  tls: CompiledBackendTLS | undefined,
  detector: OutlierDetector,
  bases: readonly string[],
): ActiveChecker {
  const c = checkers.get(id);
  if (c !== undefined) {
    c.update(config, tls, detector, bases);
    return c;
  }
  const made = new ActiveChecker(id, config, tls, detector, bases);
  checkers.set(id, made);
  return made;
}

/** After a compile: checkers of backends no longer probed stop and leave. */
export function keepActiveCheckers(ids: ReadonlySet<string>): void {
  for (const [id, c] of checkers)
    if (!ids.has(id)) {
      c.stop();
      checkers.delete(id);
    }
}

/** Every checker, for the metrics. */
export function activeCheckers(): Iterable<ActiveChecker> {
  return checkers.values();
}

/** The active state of backend `id` for `/debug/health`; undefined: not probed. */
export function activeReport(id: string): object | undefined {
  return checkers.get(id)?.report();
}
