import type { Listener, Problem, Route } from "../model/types.ts";
import { problem } from "./problems.ts";

/**
 * Ingress rules live on the default listener; a Gateway listener with the same address and port (no
 * pool, no static address, port = `--http-port`) shares its socket, and the data plane merges their
 * virtual hosts. Where an Ingress path and an HTTPRoute match claim the same hostname (same text, so
 * `*.foo.com` clashes whatever the wildcard semantics) and the same path (type and value), the HTTPRoute
 * wins, whatever the objects' ages: the Ingress path is dropped with a warning naming both, and the
 * route is untouched (its status shows no failure). Header, method or query conditions on the HTTPRoute
 * do not matter: it owns that host and path.
 */
export function dropIngressClashes(
  defaultListener: Listener,
  gatewayListeners: readonly Listener[],
): { listener: Listener; problems: Problem[] } {
  const claims = new Map<string, { route: Route; listener: string }>();
  for (const l of gatewayListeners) {
    if (
      l.address !== defaultListener.address ||
      l.port !== defaultListener.port ||
      l.protocol !== defaultListener.protocol
    )
      continue;
    for (const vh of l.virtualHosts) {
      for (const r of vh.routes) {
        const key = claimKey(vh.hostname, r);
        if (!claims.has(key)) claims.set(key, { route: r, listener: l.name });
      }
    }
  }
  if (claims.size === 0) return { listener: defaultListener, problems: [] };
  const problems: Problem[] = [];
  const virtualHosts = defaultListener.virtualHosts
    .map((vh) => ({
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
        return false;
      }),
    }))
    .filter((vh) => vh.routes.length > 0);
  return { listener: { ...defaultListener, virtualHosts }, problems };
}

/** Host and path match as one map key (NUL cannot occur in either; cheaper than JSON at 10k routes). */
function claimKey(hostname: string, r: Route): string {
  return `${hostname}\0${r.match.path.type}\0${r.match.path.value}`;
}
