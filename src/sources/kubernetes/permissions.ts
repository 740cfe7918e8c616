import {
  leaseResource,
  scaledObjectResource,
  skippedResources,
  statusResources,
  watchedResources,
} from "./resources.ts";

/** One RBAC grant: API group, resource (with `/status` for the subresource) and verb. */
export interface Permission {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
}

/**
 * Exactly the API calls the code makes, for the least-privilege RBAC in deploy/rbac.yaml (a test checks
 * that the manifests grant these and nothing more, and that every call the test API server saw is in it):
 * - list, watch: every kind the source reads (informers, cluster-wide), the Gateway API kinds it
 *   skips, to report each such object, and KEDA ScaledObjects (a conflict with a ScaleToZeroPolicy);
 * - get secrets: a Secret cached without its data is read when a listener or Ingress starts to use it;
 * - get configmaps: likewise a ConfigMap, when an Ingress's `custom-headers` starts to name it;
 * - get and patch `/status` of the kinds we write status for (get: re-read after 409 Conflict);
 * - get and patch the `scale` subresource of Deployments and StatefulSets (ScaleToZeroPolicy: wake and
 *   scale to zero, workload-scaler.ts), never the workloads themselves;
 * Namespaced, a Role in the gateway's own namespace: Leases get, create, update (leader election);
 * Services create, update, delete (`--gateway-services`: one per Gateway, in that namespace only);
 * Secrets create (the session key Secret, session-key-secret.ts, when absent: RBAC cannot narrow a
 * create by name; reading it is the ClusterRole's get).
 */
export function clusterPermissions(): Permission[] {
  const out: Permission[] = [];
  for (const r of [...Object.values(watchedResources), ...skippedResources, scaledObjectResource]) {
    out.push(
      { group: r.group, resource: r.plural, verb: "list" },
      { group: r.group, resource: r.plural, verb: "watch" },
    );
  }
  out.push({ group: "", resource: "secrets", verb: "get" });
  out.push({ group: "", resource: "configmaps", verb: "get" });
  for (const r of Object.values(statusResources)) {
    out.push({ group: r.group, resource: r.plural, verb: "get" });
    out.push({ group: r.group, resource: `${r.plural}/status`, verb: "patch" });
  }
  for (const resource of ["deployments/scale", "statefulsets/scale"])
    for (const verb of ["get", "patch"]) out.push({ group: "apps", resource, verb });
  return out;
}

export function leasePermissions(): Permission[] {
  const lease = ["get", "create", "update"].map((verb) => ({
    group: leaseResource.group,
    resource: leaseResource.plural,
    verb,
  }));
  const services = ["create", "update", "delete"].map((verb) => ({ group: "", resource: "services", verb }));
  return [...lease, ...services, { group: "", resource: "secrets", verb: "create" }];
}
