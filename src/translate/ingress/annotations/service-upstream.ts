/**
 * ingress-nginx's `service-upstream: "true"` (annotations/serviceupstream; controller.go
 * getServiceClusterEndpoint): the backend of each path is one endpoint, the Service's cluster IP and
 * Service port, instead of its pods (kube-proxy then balances, and a rolling update never leaves a stale
 * pod address in the gateway). As there, a Service without a cluster IP (headless, `clusterIP: None`, or
 * none given) keeps its endpoints, reported (ingress-nginx only logs it); a Service or port that cannot be
 * found stays the 503 it is. Such a backend is the Service's whatever its pods: with no ready one it still
 * forwards (kube-proxy refuses the connection: 502), where the endpoints would answer 503.
 * ingress-nginx shares one upstream per Service port among all Ingresses, so the first Ingress decides for
 * the others; here each Ingress decides for its own paths (the backend id gets `@cluster-ip`). A canary's
 * backend on the main route follows the main Ingress, as canary.ts's routes inherit its settings.
 */

import type { Backend, Problem, Route, VirtualHost } from "../../../model/index.ts";
import { isIP } from "../../../model/ip-syntax.ts";
import { clusterIPBackendId } from "../../common/names.ts";
import { problem } from "../../common/problems.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { compareStrings } from "../../common/sort.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import type { RouteEdit } from "./route-edits.ts";

export interface ClusterIPRouting {
  readonly virtualHosts: VirtualHost[];
  /** The backends given, with the cluster-IP ones added; keys sorted. */
  readonly backends: Record<string, Backend>;
  readonly problems: Problem[];
}

/** Points the routes of each Ingress whose edit asks for it at its Services' cluster IPs. */
export function routeToClusterIPs(
  virtualHosts: readonly VirtualHost[],
  edits: ReadonlyMap<string, RouteEdit>,
  backends: Readonly<Record<string, Backend>>,
  index: SnapshotIndex,
): ClusterIPRouting {
  const wanted = [...edits.values()].some((e) => e.serviceUpstream === true);
  if (!wanted) return { virtualHosts: [...virtualHosts], backends: { ...backends }, problems: [] };
  const added = new Map<string, Backend>();
  const problems: Problem[] = [];
  const reported = new Set<string>();
  const clusterIPOf = (route: Route, id: string): string | undefined => {
    const b = backends[id];
    if (b === undefined || b.problem === "ServiceNotFound" || b.problem === "PortNotFound") return undefined;
    const cip = clusterIPBackendId(id);
    if (added.has(cip)) return cip;
    const svcKey = `${b.service.namespace}/${b.service.name}`;
    const ip = index.services.get(svcKey)?.spec?.clusterIP?.trim() ?? "";
    if (isIP(ip) === 0) {
      const key = `${route.source.namespace}/${route.source.name}\0${svcKey}`;
      if (!reported.has(key)) {
        reported.add(key);
        const has = ip === "" ? "has no cluster IP" : `has no cluster IP (clusterIP ${JSON.stringify(ip)})`;
        const message = `annotation ${NGINX_PREFIX}service-upstream: Service ${svcKey} ${has}; its endpoints are used instead`;
        problems.push(problem(route.source, "InvalidAnnotation", message));
      }
      return undefined;
    }
    const { problem: _endpointsProblem, ...rest } = b;
    added.set(cip, { ...rest, id: cip, endpoints: [{ address: ip, port: b.service.port }] });
    return cip;
  };
  const routed = virtualHosts.map((vh) => {
    let changed = false;
    const routes = vh.routes.map((r) => {
      const a = r.action;
      if (r.source.kind !== "Ingress" || a.kind !== "Forward") return r;
      if (edits.get(`${r.source.namespace}/${r.source.name}`)?.serviceUpstream !== true) return r;
      const chosen = a.backends.map((wb) => {
        const cip = wb.failStatus === undefined ? clusterIPOf(r, wb.backendId) : undefined;
        return cip === undefined ? wb : { ...wb, backendId: cip };
      });
      if (chosen.every((wb, i) => wb === a.backends[i])) return r;
      changed = true;
      return { ...r, action: { ...a, backends: chosen } };
    });
    return changed ? { ...vh, routes } : vh;
  });
  const all = new Map<string, Backend>([...Object.entries(backends), ...added]);
  const sorted: Record<string, Backend> = {};
  for (const id of [...all.keys()].sort(compareStrings)) sorted[id] = all.get(id) as Backend;
  return { virtualHosts: routed, backends: sorted, problems };
}
