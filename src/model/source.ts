/** Where each piece of the model came from, and what is wrong with an input object. */

/** Where a piece of the model came from, so logs, metrics and statuses can name it. */
export interface SourceRef {
  /** Kubernetes kind of the source object, e.g. `Ingress`, `HTTPRoute`, `Gateway`. */
  readonly kind: string;
  /** Namespace of the source object ("" for cluster-scoped objects). */
  readonly namespace: string;
  /** Name of the source object. */
  readonly name: string;
}

/** Something wrong with an input object, found by a source or by translation. */
export interface Problem {
  /** The object at fault. */
  readonly object: SourceRef;
  /** Short machine-readable reason, e.g. `InvalidPath`, `BackendNotFound`, `Conflict`. */
  readonly reason: string;
  /** Human-readable explanation naming the offending field and value. */
  readonly message: string;
  /**
   * `error`: the object (or the named part) was left out; `warning`: served, but worth knowing; `info`:
   * served as asked, and a setting in it has no meaning here (an nginx tuning annotation).
   */
  readonly severity: "error" | "warning" | "info";
}
