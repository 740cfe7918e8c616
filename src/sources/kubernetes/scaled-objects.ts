/**
 * KEDA ScaledObjects, watched to find one that moves a ScaleToZeroPolicy's workload to 0 as well
 * (docs/scale-to-zero.md): with `scaler: Gateway` and such a ScaledObject the two would undo each
 * other's writes (KEDA scales to 0 on its own cooldown and back up on its own triggers). The gateway then
 * stops scaling that workload, holds requests only (as with `scaler: External`), and the policy's
 * `Scaling` condition names the ScaledObject. A ScaledObject with `minReplicaCount` 1 or more keeps the
 * workload between its bounds through an HPA, which pauses at 0 like any HPA: no conflict. The kind is
 * optional: not installed (404) means there is none; RBAC 403 counts as none too, and `forbidden` says so
 * for the condition.
 */
import type { WorkloadRef } from "../../proxy/activation/scaler.ts";
import type { KubeClient } from "./client.ts";
import { KindInformer } from "./informer.ts";
import { scaledObjectResource } from "./resources.ts";

interface ScaledObjectSpec {
  readonly scaleTargetRef?: {
    readonly name?: unknown;
    readonly kind?: unknown;
    readonly apiVersion?: unknown;
  };
  readonly minReplicaCount?: unknown;
}

export class ScaledObjectWatch {
  readonly #informer: KindInformer;

  constructor(client: KubeClient, onChange: () => void) {
    this.#informer = new KindInformer(client, scaledObjectResource, { onChange, optional: true });
  }

  start(): void {
    this.#informer.start();
  }

  stop(): void {
    this.#informer.stop();
  }

  /** RBAC does not let the gateway list ScaledObjects: a conflict cannot be seen. */
  get forbidden(): boolean {
    return this.#informer.forbidden;
  }

  /** `namespace/name` of a ScaledObject that may scale `w` to 0; undefined: none seen. */
  conflict(w: WorkloadRef): string | undefined {
    for (const o of this.#informer.list()) {
      const meta = o.metadata as { namespace?: string; name?: string } | undefined;
      if (meta?.namespace !== w.namespace) continue;
      const spec = (o.spec ?? {}) as ScaledObjectSpec;
      const ref = spec.scaleTargetRef;
      // KEDA's defaults: kind Deployment, apiVersion apps/v1, minReplicaCount 0.
      if (ref?.name !== w.name || (ref.kind ?? "Deployment") !== w.kind) continue;
      if ((ref.apiVersion ?? "apps/v1") !== "apps/v1") continue;
      const min = spec.minReplicaCount ?? 0;
      if (typeof min === "number" && min >= 1) continue;
      return `${meta.namespace}/${meta.name}`;
    }
    return undefined;
  }
}
