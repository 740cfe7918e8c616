/**
 * Activation with `--kube` (docs/scale-to-zero.md): the API server's `scale` subresource wakes and scales
 * workloads, the leader scales idle ones down, last-request times are shared through Redis (or the
 * primary's workers), KEDA ScaledObjects are watched for conflicts. Loaded by serve.ts only with `--kube`,
 * with the Kubernetes client library (a folder gateway is 24 MB smaller in RSS without them).
 */
import type { ServeConfig } from "../config/config.ts";
import { logger } from "../observability/logger.ts";
import type { BackendActivator } from "../proxy/activation/activator.ts";
import {
  keepActivators,
  onActivationChange,
  setAutoscalerConflicts,
  setWorkloadScaler,
} from "../proxy/activation/registry.ts";
import { IdleScaleDown } from "../proxy/activation/scale-down.ts";
import { SharedActivity } from "../proxy/activation/shared-activity.ts";
import { WorkerActivity } from "../proxy/activation/worker-activity.ts";
import type { ClusterRuntime } from "../sources/kubernetes/cluster.ts";
import { ScaledObjectWatch } from "../sources/kubernetes/scaled-objects.ts";
import { KubeWorkloadScaler } from "../sources/kubernetes/workload-scaler.ts";
import { type ActivationRuntime, type Verdict, withScaling } from "./activation.ts";

const log = logger.child({ component: "activation" });

/**
 * Start activation in a cluster; `changed` is called when a condition may have changed (a wake failed
 * for good, or works again). `processes`: the serving processes of this replica (`--workers`);
 * `workerAdmins`: on the primary, each worker's admin port as it reports it (main.ts).
 */
export function startClusterActivation(
  config: ServeConfig,
  cluster: ClusterRuntime,
  processes: number,
  changed: () => void,
  workerAdmins: ReadonlyMap<number, number> = new Map(),
): ActivationRuntime {
  onActivationChange(changed);
  const scaler = new KubeWorkloadScaler(cluster.client);
  setWorkloadScaler(scaler);
  // Only the workloads of `scaler: Gateway` policies can conflict: External ones are KEDA's by design.
  const scaledObjects = new ScaledObjectWatch(cluster.client, changed);
  scaledObjects.start();
  setAutoscalerConflicts((w) => scaledObjects.conflict(w));
  const redisUrl = config["redis-url"];
  const redis = redisUrl === undefined ? undefined : new SharedActivity(redisUrl);
  // Without Redis, the primary of a --workers replica asks its workers (only it runs the scale-down).
  const shared = redis ?? (processes > 1 ? new WorkerActivity(processes - 1, workerAdmins) : undefined);
  const blocked = (): string | undefined => {
    if (redis !== undefined) return undefined;
    const replicas = gatewayReplicas(cluster, config["publish-service"]);
    return replicas > 1
      ? `${replicas} gateway replicas (--publish-service) and no --redis-url: no replica sees every request, so the workload is woken but never scaled to zero`
      : undefined;
  };
  const elector = cluster.elector;
  const scaleDown =
    elector === undefined
      ? undefined
      : new IdleScaleDown({
          scaler,
          isLeader: () => elector.isLeader,
          blocked,
          ...(shared ? { shared } : {}),
        });
  log.debug("activation started", {
    sharedActivity: redis !== undefined ? "redis" : shared !== undefined ? "workers" : "none",
    scaleDown: scaleDown !== undefined,
  });
  return {
    withConditions: (s) => withScaling(s, (a) => clusterCondition(a, blocked(), scaledObjects)),
    close() {
      scaleDown?.stop();
      scaledObjects.stop();
      setAutoscalerConflicts(() => undefined);
      redis?.close();
      setWorkloadScaler(undefined);
      onActivationChange(() => {});
      // A stopped gateway holds nothing: what waits gets 503 now.
      keepActivators(new Set());
    },
  };
}

function clusterCondition(
  a: BackendActivator,
  blocked: string | undefined,
  scaledObjects: ScaledObjectWatch,
): Verdict {
  if (a.scaleProblem !== undefined) {
    const colon = a.scaleProblem.indexOf(":");
    const reason = colon > 0 ? a.scaleProblem.slice(0, colon) : "ScaleFailed";
    return { ok: false, reason, message: `${a.scaleProblem}; requests for its backends get 503 at once` };
  }
  if (a.config.scaler === "External")
    return {
      ok: true,
      reason: "External",
      message:
        "an external autoscaler moves the workload between 0 and 1; the gateway holds requests while it wakes",
    };
  const keda = scaledObjects.conflict(a.workload);
  if (keda !== undefined)
    return {
      ok: false,
      reason: "ConflictingAutoscaler",
      message: `KEDA ScaledObject ${keda} also scales ${a.config.workload.kind} ${a.workload.namespace}/${a.config.workload.name} to 0 (minReplicaCount 0): the gateway neither wakes nor scales it down and only holds requests while KEDA wakes it; set scaler: External, or minReplicaCount 1 or more`,
    };
  const unchecked = scaledObjects.forbidden
    ? "; RBAC does not let the gateway list KEDA ScaledObjects (keda.sh scaledobjects), so one scaling the same workload would go unnoticed"
    : "";
  if (a.config.minReplicas === 1)
    return {
      ok: true,
      reason: "Active",
      message: `the gateway wakes the workload; minReplicas 1: never scaled down${unchecked}`,
    };
  if (blocked !== undefined) return { ok: false, reason: "NoSharedActivity", message: blocked + unchecked };
  return {
    ok: true,
    reason: "Active",
    message: `the gateway wakes the workload on the first request and the leader scales it to zero after ${a.config.idleMs} ms idle${unchecked}`,
  };
}

/** Ready endpoints of the gateway's own Service (`--publish-service`): its replicas; 1 when unknown. */
function gatewayReplicas(cluster: ClusterRuntime, publishService: string | undefined): number {
  if (publishService === undefined) return 1;
  const [ns, name] = publishService.split("/");
  let n = 0;
  for (const s of cluster.source.objects("EndpointSlice")) {
    const meta = s.metadata as { namespace?: string; labels?: Record<string, string> } | undefined;
    if (meta?.namespace !== ns || meta?.labels?.["kubernetes.io/service-name"] !== name) continue;
    const endpoints = (s as { endpoints?: { conditions?: { ready?: boolean } }[] }).endpoints ?? [];
    n += endpoints.filter((e) => e?.conditions?.ready !== false).length;
  }
  return Math.max(1, n);
}
