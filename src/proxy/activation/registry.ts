/**
 * The activators of this process, one per backend id with activation (a ScaleToZeroPolicy or the
 * Service's annotations), kept across compiles as the outlier detectors are (health/outlier-registry.ts):
 * a held request must survive an unrelated reload, and the idle clock must not restart with each one.
 * compile() asks for each backend's activator and then names the ids still configured; the others
 * leave (their held requests get 503 at once). The scaler is set once by the composition root: in a
 * cluster the API server's `scale` subresource, in folder mode none (requests are only held).
 */
import type { BackendActivation } from "../../model/index.ts";
import { BackendActivator } from "./activator.ts";
import type { WorkloadRef, WorkloadScaler } from "./scaler.ts";

const activators = new Map<string, BackendActivator>();
let scaler: WorkloadScaler | undefined;
let conflictOf: (w: WorkloadRef) => string | undefined = () => undefined;
let onChange: () => void = () => {};
let onWoke: (a: BackendActivator) => void = () => {};

/** Who scales workloads in this process (undefined: nobody; requests are held until endpoints appear). */
export function setWorkloadScaler(s: WorkloadScaler | undefined): void {
  scaler = s;
}

/**
 * Who else scales a workload to 0 (a KEDA ScaledObject: `namespace/name`); such a workload is neither
 * woken nor scaled down by the gateway, its requests are only held.
 */
export function setAutoscalerConflicts(fn: (w: WorkloadRef) => string | undefined): void {
  conflictOf = fn;
}

/** The other autoscaler that owns `w`'s 0↔1, if any. */
export function autoscalerConflict(w: WorkloadRef): string | undefined {
  return conflictOf(w);
}

/** Called when an activator's scale problem appears or clears (the policy's condition changes). */
export function onActivationChange(fn: () => void): void {
  onChange = fn;
}

/** Called when a backend sees traffic after a quiet spell (shared-activity.ts publishes it at once). */
export function onActivationWoke(fn: (a: BackendActivator) => void): void {
  onWoke = fn;
}

/** The activator of backend `id`, created or brought up to date with `config` and `bases`. */
export function activatorFor(
  id: string,
  config: BackendActivation,
  bases: readonly string[],
  service: { readonly namespace: string; readonly name: string },
): BackendActivator {
  let a = activators.get(id);
  if (a === undefined) {
    const made: BackendActivator = new BackendActivator(
      id,
      config,
      service,
      () => (conflictOf(made.workload) === undefined ? scaler : undefined),
      () => onChange(),
      () => onWoke(made),
    );
    a = made;
    activators.set(id, a);
  }
  a.update(config, service, bases);
  return a;
}

/** After a compile: activators of backends no longer configured leave, answering what they held. */
export function keepActivators(ids: ReadonlySet<string>): void {
  for (const [id, a] of activators)
    if (!ids.has(id)) {
      activators.delete(id);
      a.close();
    }
}

/** Every activator, for metrics, the scale-down and the short path. */
export function allActivators(): Iterable<BackendActivator> {
  return activators.values();
}

/** The activators of one Service's backends that have no endpoints (what an EndpointSlice may wake). */
export function sleepingActivators(namespace: string, service: string): BackendActivator[] {
  const out: BackendActivator[] = [];
  for (const a of activators.values())
    if (a.service.namespace === namespace && a.service.name === service && a.compiledEmpty) out.push(a);
  return out;
}

/** What `/debug/activation` shows: every activated backend of this process, held requests and totals. */
export function activationReport(): object[] {
  return [...activators.values()].map((a) => ({
    backend: a.backendId,
    workload: `${a.config.workload.kind}/${a.service.namespace}/${a.config.workload.name}`,
    scaler: a.config.scaler,
    endpoints: a.bases.length,
    held: a.held,
    inflight: a.inflight,
    idleMs: Date.now() - a.lastRequestMs,
    // Absolute: a --workers primary combines its workers' times with its own (worker-activity.ts).
    lastRequestAt: a.lastRequestMs,
    ...(a.scaleProblem !== undefined ? { scaleProblem: a.scaleProblem } : {}),
    wakeReleaseMs: a.wakeLatencies.map((ms) => Math.round(ms * 100) / 100),
    totals: { ...a.totals },
  }));
}
