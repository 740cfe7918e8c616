import type { HostParse, HostPattern } from "../common/host-patterns.ts";
import { anyHost, parseDnsPattern } from "../common/host-patterns.ts";

/**
 * Gateway API hostnames (listener `hostname`, HTTPRoute `hostnames`): the rules of `parseDnsPattern`,
 * where a wildcard matches one or more labels (`*.foo.com` matches `a.b.foo.com`, never `foo.com`), so it
 * becomes a `WildcardAnyLabels` virtual host.
 */
export function parseGatewayHostname(host: string): HostParse {
  if (typeof host !== "string" || host === "") return { ok: false, message: "must not be empty" };
  return parseDnsPattern(host, "WildcardAnyLabels");
}

/** Whether `name` (exact) lies under the wildcard `*.suffix` (one or more extra labels). */
function underWildcard(name: string, wildcard: string): boolean {
  const suffix = wildcard.slice(1); // ".foo.com"
  return name.length > suffix.length && name.endsWith(suffix);
}

/**
 * The hostname requests must have to reach a route through a listener: the more specific of the two
 * when one includes the other, undefined when they do not intersect. `undefined` for either side means
 * "no hostname" (any host). Both absent gives `*` (match `Any`).
 * - `foo.com` ∩ `foo.com` = `foo.com`; `a.foo.com` ∩ `*.foo.com` = `a.foo.com` (either way round)
 * - `*.a.foo.com` ∩ `*.foo.com` = `*.a.foo.com`; `*.foo.com` ∩ `*.bar.com` = none
 */
export function intersectHostnames(
  listener: HostPattern | undefined,
  route: HostPattern | undefined,
): HostPattern | undefined {
  if (!listener || listener.match === "Any") return route ?? anyHost;
  if (!route || route.match === "Any") return listener;
  const lw = listener.match !== "Exact";
  const rw = route.match !== "Exact";
  if (!lw && !rw) return listener.hostname === route.hostname ? listener : undefined;
  if (!lw && rw) return underWildcard(listener.hostname, route.hostname) ? listener : undefined;
  if (lw && !rw) return underWildcard(route.hostname, listener.hostname) ? route : undefined;
  if (listener.hostname === route.hostname) return listener;
  if (underWildcard(listener.hostname.slice(2), route.hostname)) return listener;
  if (underWildcard(route.hostname.slice(2), listener.hostname)) return route;
  return undefined;
}
