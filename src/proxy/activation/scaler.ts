/**
 * What the activation needs from whoever scales workloads (in a cluster: the `scale` subresource through
 * the API server, sources/kubernetes/workload-scaler.ts; in folder mode: nobody). The contract sits here
 * so the data plane never imports the Kubernetes client.
 */

/** A workload named by a policy: kind, namespace, name. */
export interface WorkloadRef {
  readonly kind: "Deployment" | "StatefulSet";
  readonly namespace: string;
  readonly name: string;
}

/**
 * The outcome of one scale call. `permanent`: asking again will not help until something changes (403
 * Forbidden: RBAC; 404: no such workload), so held requests are answered at once instead of waiting.
 */
export type ScaleOutcome =
  | { readonly ok: true; readonly changed: boolean }
  | { readonly ok: false; readonly permanent: boolean; readonly reason: string };

export interface WorkloadScaler {
  /** Raise replicas from 0 to 1; a workload with replicas already is left alone (`changed` false). */
  wake(w: WorkloadRef): Promise<ScaleOutcome>;
  /** Lower replicas to 0 when they are above it (`changed` false when they were 0 already). */
  scaleToZero(w: WorkloadRef): Promise<ScaleOutcome>;
}
