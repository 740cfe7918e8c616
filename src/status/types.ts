/**
 * Status that translation computes for the objects it read, in the exact shape the Kubernetes API
 * expects under `.status` (Gateway API conditions, RouteParentStatus, ListenerStatus). Translation is pure,
 * so `lastTransitionTime` is absent here: the status writer sets it (and keeps the old value when a
 * condition did not change).
 */

/** metav1.Condition without `lastTransitionTime`. */
export interface Condition {
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  /** CamelCase reason from the Gateway API spec, e.g. `Accepted`, `NotAllowedByListeners`. */
  readonly reason: string;
  readonly message: string;
  /** The `metadata.generation` of the object the condition was computed from. */
  readonly observedGeneration?: number;
}

/** Which object a status belongs to. */
export interface StatusTarget {
  /** API group, "" for core. */
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** The full `.status` we own for one object. For routes, `status.parents` holds only our controller's
 * entries; the writer merges them with entries of other controllers, which it leaves untouched. */
export interface ObjectStatus {
  readonly target: StatusTarget;
  /** `metadata.generation` the status was computed from. */
  readonly generation?: number;
  readonly status: Readonly<Record<string, unknown>>;
  /** Gateways, at /debug/status only: never written to the API (the spec exposes none in `.status`). */
  readonly infrastructure?: InfrastructureMetadata;
}

/**
 * The labels and annotations Gatehouse puts on every object it creates for a Gateway: its own, plus the
 * Gateway's `spec.infrastructure.labels` and `annotations` it accepted (translate/gateway/infrastructure.ts).
 */
export interface InfrastructureMetadata {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}
