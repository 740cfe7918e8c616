import { isIP } from "node:net";
import type { HostPattern } from "./hosts.ts";
import { anyHost, subdomainProblem } from "./hosts.ts";

/**
 * Gateway API hostnames (listener `hostname`, HTTPRoute `hostnames`): an RFC 1123 subdomain, or `*.`
 * followed by one. A wildcard matches one or more labels (`*.foo.com` matches `a.b.foo.com`, never
 * `foo.com`), so it becomes a `WildcardAnyLabels` virtual host. Lower-case only (the CRD pattern refuses
 * upper case), no IP address, no port.
 */
export function parseGatewayHostname(
  host: string,
): { readonly ok: true; readonly host: HostPattern } | { readonly ok: false; readonly message: string } {
  if (typeof host !== "string" || host === "") return { ok: false, message: "must not be empty" };
  if (isIP(host) !== 0) return { ok: false, message: "must be a DNS name, not an IP address" };
  if (host.length > 253) return { ok: false, message: "must be no more than 253 characters" };
  if (host !== host.toLowerCase()) return { ok: false, message: "must be lower-case" };
  const wildcard = host.startsWith("*.");
  const rest = wildcard ? host.slice(2) : host;
  if (rest.includes("*")) {
    return {
      ok: false,
      message: 'a wildcard is allowed only as the whole first label, e.g. "*.example.com"',
    };
  }
  const problem = subdomainProblem(rest);
  if (problem) return { ok: false, message: problem };
  return { ok: true, host: { hostname: host, match: wildcard ? "WildcardAnyLabels" : "Exact" } };
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
