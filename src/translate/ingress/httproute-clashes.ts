import type { Listener, Problem, Route, SourceRef, VirtualHost } from "../../model/index.ts";
import { condition } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { problem } from "../common/problems.ts";

/** Our condition on an HTTPRoute's parent status that took a host and path from an Ingress. */
export const ingressConflictCondition = "gatehouse.dev/IngressConflict";

/**
 * Ingress rules live on the default listener; a Gateway listener with the same address and port (no
 * pool, no static address, port = `--http-port`) shares its socket, and the data plane merges their
 * virtual hosts. Where an Ingress path and an HTTPRoute match claim the same hostname (same text, so
 * `*.foo.com` clashes whatever the wildcard semantics) and the same path (type and value), the HTTPRoute
 * wins, whatever the objects' ages: the Ingress path is dropped with a warning naming both, and the
 * route keeps serving, with a condition of ours on its parent statuses saying which Ingress path it
 * overrides (`gatehouse.dev/IngressConflict`, True, reason `OverridesIngressPath`; Accepted is not
 * touched, since the route is served exactly as written). Header, method or query conditions on the
 * HTTPRoute do not matter: it owns that host and path.
 */
export function dropIngressClashes(
  defaultListener: Listener,
  gatewayListeners: readonly Listener[],
): { listener: Listener; problems: Problem[]; overrides: Map<string, string[]> } {
  // Hostnames first (one entry per virtual host): only a hostname both sides have can clash, and at
  // 10k routes building a host-and-path key for every route on both sides cost ~6 ms a translation.
  const shared = new Map<string, { vh: VirtualHost; listener: string }[]>();
  for (const l of gatewayListeners) {
    if (
      l.address !== defaultListener.address ||
      l.port !== defaultListener.port ||
      l.protocol !== defaultListener.protocol
    )
      continue;
    for (const vh of l.virtualHosts) {
      const list = shared.get(vh.hostname);
      if (list === undefined) shared.set(vh.hostname, [{ vh, listener: l.name }]);
      else list.push({ vh, listener: l.name });
    }
  }
  const claims = new Map<string, { route: Route; listener: string }>();
  for (const vh of defaultListener.virtualHosts) {
    for (const g of shared.get(vh.hostname) ?? []) {
      for (const r of g.vh.routes) {
        const key = claimKey(vh.hostname, r);
        if (!claims.has(key)) claims.set(key, { route: r, listener: g.listener });
      }
    }
  }
  const overrides = new Map<string, string[]>();
  if (claims.size === 0) return { listener: defaultListener, problems: [], overrides };
  const problems: Problem[] = [];
  const virtualHosts = defaultListener.virtualHosts
    .map((vh) => {
      if (!shared.has(vh.hostname)) return vh;
      return {
        ...vh,
        routes: vh.routes.filter((r) => {
          const claim = claims.get(claimKey(vh.hostname, r));
          if (!claim || r.source.kind !== "Ingress") return true;
          const by = claim.route.source;
          problems.push(
            problem(
              r.source,
              "Conflict",
              `${r.name}: ${r.match.path.type} path "${r.match.path.value}" on host "${vh.hostname}" is also claimed by ${by.kind} ${by.namespace}/${by.name} (${claim.route.name}) on listener ${claim.listener}, which shares this listener's address and port; the HTTPRoute wins and this path is ignored`,
              "warning",
            ),
          );
          const key = refKey(by);
          const said = `host "${vh.hostname}" ${r.match.path.type} path "${r.match.path.value}" is also claimed by Ingress ${r.source.namespace}/${r.source.name}; this route wins and that Ingress path is not served`;
          overrides.set(key, [...(overrides.get(key) ?? []), said]);
          return false;
        }),
      };
    })
    .filter((vh) => vh.routes.length > 0);
  return { listener: { ...defaultListener, virtualHosts }, problems, overrides };
}

function refKey(ref: SourceRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/**
 * The HTTPRoutes that won host and path from an Ingress get `gatehouse.dev/IngressConflict` on each of
 * their parent statuses (every parent of ours: the status names the route, not the listener).
 */
export function markIngressOverrides(
  statuses: readonly ObjectStatus[],
  overrides: ReadonlyMap<string, readonly string[]>,
): ObjectStatus[] {
  if (overrides.size === 0) return [...statuses];
  return statuses.map((s) => {
    if (s.target.kind !== "HTTPRoute") return s;
    const said = overrides.get(`HTTPRoute/${s.target.namespace}/${s.target.name}`);
    const parents = s.status.parents;
    if (said === undefined || !Array.isArray(parents)) return s;
    const c = condition(
      ingressConflictCondition,
      true,
      "OverridesIngressPath",
      said.join("; "),
      s.generation,
    );
    return {
      ...s,
      status: {
        ...s.status,
        parents: parents.map((p: { conditions?: unknown[] }) => ({
          ...p,
          conditions: [...(p.conditions ?? []), c],
        })),
      },
    };
  });
}

/** Host and path match as one map key (NUL cannot occur in either; cheaper than JSON at 10k routes). */
function claimKey(hostname: string, r: Route): string {
  return `${hostname}\0${r.match.path.type}\0${r.match.path.value}`;
}
