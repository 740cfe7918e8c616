/**
 * Activation's shared part for one gateway process (docs/scale-to-zero.md): the `Scaling` condition each
 * accepted ScaleToZeroPolicy ancestor carries, and folder mode, where nobody scales workloads. With
 * `--kube`, cluster-activation.ts adds the scaler, the leader's scale-down and the shared activity.
 */
import type { BackendActivator } from "../proxy/activation/activator.ts";
import {
  allActivators,
  keepActivators,
  onActivationChange,
  setWorkloadScaler,
} from "../proxy/activation/registry.ts";
import { condition } from "../status/conditions.ts";
import { withAncestorCondition } from "../status/runtime-conditions.ts";
import type { ObjectStatus } from "../status/types.ts";

export const ScalingCondition = "Scaling";

export interface ActivationRuntime {
  /** `statuses` with the `Scaling` condition on every accepted ScaleToZeroPolicy ancestor. */
  withConditions(statuses: readonly ObjectStatus[]): ObjectStatus[];
  close(): void;
}

/**
 * Activation in folder mode: nobody scales workloads, requests are held until an EndpointSlice shows a
 * ready endpoint. `changed` is called when a condition may have changed. With `--kube`, serve.ts starts
 * cluster-activation.ts instead (loaded only then, with the Kubernetes client).
 */
export function startFolderActivation(changed: () => void): ActivationRuntime {
  onActivationChange(changed);
  setWorkloadScaler(undefined);
  return {
    withConditions: (s) => withScaling(s, () => folderMode),
    close: () => keepActivators(new Set()),
  };
}

export type Verdict = { readonly ok: boolean; readonly reason: string; readonly message: string };

const folderMode: Verdict = {
  ok: false,
  reason: "NoScaler",
  message:
    "folder mode: there is no workload to scale; requests are held until the backend's EndpointSlice shows a ready endpoint",
};

/** `statuses` with each ScaleToZeroPolicy ancestor's `Scaling` condition, from its activators' verdicts. */
export function withScaling(
  statuses: readonly ObjectStatus[],
  verdict: (a: BackendActivator) => Verdict,
): ObjectStatus[] {
  const byPolicy = new Map<string, BackendActivator[]>();
  for (const a of allActivators()) {
    const s = a.config.source;
    if (s.kind !== "ScaleToZeroPolicy") continue;
    const key = `${s.namespace}/${s.name}`;
    byPolicy.set(key, [...(byPolicy.get(key) ?? []), a]);
  }
  return withAncestorCondition(statuses, "ScaleToZeroPolicy", (s) => {
    const mine = byPolicy.get(`${s.target.namespace}/${s.target.name}`);
    if (mine === undefined) return undefined;
    const verdicts = mine.map(verdict);
    const v = verdicts.find((x) => !x.ok) ?? (verdicts[0] as Verdict);
    return condition(ScalingCondition, v.ok, v.reason, v.message, s.generation);
  });
}
