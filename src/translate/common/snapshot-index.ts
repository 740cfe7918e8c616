import type { BackendTLSPolicy } from "../../sources/schema/backend-tls-policy.ts";
import type { EndpointSlice, Service } from "../../sources/schema/core.ts";
import type { HTTPRouteFilterObject } from "../../sources/schema/route-filter.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { arrayOf, nameOf, namespaceOf } from "./objects.ts";
import { compareStrings } from "./sort.ts";

/** Lookups translation needs, built once per snapshot. */
export interface SnapshotIndex {
  /** Key `<ns>/<name>`. */
  readonly services: ReadonlyMap<string, Service>;
  /** Key `<ns>/<service>` from the `kubernetes.io/service-name` label; slices sorted by name. */
  readonly slicesByService: ReadonlyMap<string, readonly EndpointSlice[]>;
  /** gatehouse.dev HTTPRouteFilters (HTTPRoute ExtensionRef filters); key `<ns>/<name>`. */
  readonly routeFilters: ReadonlyMap<string, HTTPRouteFilterObject>;
  /**
   * BackendTLSPolicies by the Service a targetRef names (core Service, key `<ns>/<service>`, the policy's
   * namespace), each list by namespace/name; a policy with two targetRefs on one Service is listed once.
   * Optional only for indexes made by hand in tests; absent: none.
   */
  readonly backendTLSPolicies?: ReadonlyMap<string, readonly BackendTLSPolicy[]>;
}

export const serviceNameLabel = "kubernetes.io/service-name";

export function indexSnapshot(snapshot: ResourceSnapshot): SnapshotIndex {
  const services = new Map<string, Service>();
  for (const svc of arrayOf(snapshot?.services)) {
    if (svc?.metadata) services.set(`${namespaceOf(svc)}/${nameOf(svc)}`, svc);
  }
  const slicesByService = new Map<string, EndpointSlice[]>();
  for (const slice of arrayOf(snapshot?.endpointSlices)) {
    const owner = slice?.metadata?.labels?.[serviceNameLabel];
    if (typeof owner !== "string") continue;
    const key = `${namespaceOf(slice)}/${owner}`;
    const list = slicesByService.get(key);
    if (list) list.push(slice);
    else slicesByService.set(key, [slice]);
  }
  for (const list of slicesByService.values()) list.sort((a, b) => compareStrings(nameOf(a), nameOf(b)));
  const routeFilters = new Map<string, HTTPRouteFilterObject>();
  for (const f of arrayOf(snapshot?.httpRouteFilters))
    if (f?.metadata) routeFilters.set(`${namespaceOf(f)}/${nameOf(f)}`, f);
  const backendTLSPolicies = new Map<string, BackendTLSPolicy[]>();
  const policies = arrayOf(snapshot?.backendTLSPolicies).filter((p) => p?.metadata);
  policies.sort(
    (a, b) => compareStrings(namespaceOf(a), namespaceOf(b)) || compareStrings(nameOf(a), nameOf(b)),
  );
  for (const p of policies) {
    for (const t of arrayOf(p.spec?.targetRefs)) {
      if ((t?.group ?? "") !== "" || t.kind !== "Service" || typeof t.name !== "string") continue;
      const key = `${namespaceOf(p)}/${t.name}`;
      const list = backendTLSPolicies.get(key) ?? [];
      if (!list.includes(p)) list.push(p);
      backendTLSPolicies.set(key, list);
    }
  }
  return { services, slicesByService, routeFilters, backendTLSPolicies };
}
