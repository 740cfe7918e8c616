import { anyHost } from "../common/host-patterns.ts";
import { ingressDefaultBackendRouteName } from "../common/names.ts";
import type { IngressTranslation, RouteCandidate } from "./ingress.ts";

/**
 * Where an Ingress's `spec.defaultBackend` is served, following ingress-nginx: as the lowest-priority
 * `Prefix /` route on the catch-all virtual host `*`, and on each host of the same Ingress, so requests
 * to its hosts that match none of its paths reach its default backend rather than a 404.
 * It is not placed where a rule already serves `Prefix /` (`rootHosts`): there it could never match.
 * Several Ingresses placing one on the same host are a conflict, settled by dropConflicts (oldest wins).
 */
export function placeDefaultBackends(
  translations: readonly IngressTranslation[],
  rootHosts: ReadonlySet<string>,
): RouteCandidate[] {
  const out: RouteCandidate[] = [];
  for (const t of translations) {
    const backend = t.defaultBackend;
    if (!backend) continue;
    const hosts = [anyHost, ...t.hosts.filter((h) => h.hostname !== anyHost.hostname)];
    for (const host of hosts) {
      if (rootHosts.has(host.hostname)) continue;
      out.push({
        name: ingressDefaultBackendRouteName(t.ref.namespace, t.ref.name),
        ref: t.ref,
        field: "spec.defaultBackend",
        label: "default backend",
        host,
        path: { type: "Prefix", value: "/" },
        isDefault: true,
        source: t.order,
        ruleIndex: -1,
        pathIndex: -1,
        backend,
      });
    }
  }
  return out;
}

/** Hostnames on which some rule route is `Prefix /`. */
export function hostsWithRootPrefix(routes: readonly RouteCandidate[]): Set<string> {
  const hosts = new Set<string>();
  for (const r of routes) if (r.path.type === "Prefix" && r.path.value === "/") hosts.add(r.host.hostname);
  return hosts;
}
