/**
 * ingress-nginx `ssl-redirect` on the default HTTP listener: a route of an Ingress whose host has a
 * certificate of its own (ingress/tls.ts) answers plain-HTTP requests with 308 to `https://` on the HTTPS
 * listener's port (left out when 443). Per Ingress:
 * - `nginx.ingress.kubernetes.io/ssl-redirect: "false"` turns it off (default: `--ssl-redirect`, true);
 * - `nginx.ingress.kubernetes.io/force-ssl-redirect: "true"` redirects even hosts without TLS (for a
 *   TLS-terminating load balancer in front);
 * - as ingress-nginx's lua_ingress.lua, one trailing `/` of the path and query is dropped (`/a/` →
 *   `https://host/a`) unless `preserve-trailing-slash: "true"`;
 * - `use-port-in-redirects: "true"` names the port even when it is 443. Without it ingress-nginx names no
 *   port at all; Gatehouse names the HTTPS port whenever it is not 443, so the redirect still arrives.
 * A route that already redirects (permanent-/temporal-redirect, app-root, a www redirect) is left alone:
 * nginx's `return` runs before the ssl-redirect of lua_ingress.lua (end of the rewrite phase).
 * It runs last, on the finished model: in ingress-nginx the redirect happens in the rewrite phase, before
 * authentication and rate limiting, so a redirected route carries neither (nor filters).
 */
import type { GatewayModel, Listener, Problem, Route } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { DEFAULT_HTTP_LISTENER } from "../../common/names.ts";
import { annotationOf, sourceRef } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { namesCover } from "../../common/tls-secret.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { goBool } from "./route-edits.ts";

export interface SSLRedirectPlan {
  /** HTTPS listener port the redirects point at. */
  readonly httpsPort: number;
  /** Hosts with a certificate of their own. */
  readonly tlsHosts: readonly string[];
  /** `ns/name` of an Ingress → its decision; Ingresses not listed are not redirected. */
  readonly ingresses: ReadonlyMap<string, SSLRedirectDecision>;
}

export interface SSLRedirectDecision {
  readonly sslRedirect: boolean;
  readonly force: boolean;
  readonly preserveTrailingSlash: boolean;
  readonly portInRedirects: boolean;
}

/** Each Ingress's annotations read once, as Go's ParseBool reads them; another value is a warning and ignored. */
export function sslRedirectPlan(
  ingresses: readonly Ingress[],
  tlsHosts: readonly string[],
  httpsPort: number,
  sslRedirectDefault: boolean,
): { plan: SSLRedirectPlan; problems: Problem[] } {
  const problems: Problem[] = [];
  const decisions = new Map<string, SSLRedirectDecision>();
  for (const ingress of ingresses) {
    const ref = sourceRef("Ingress", ingress);
    const flag = (name: string, fallback: boolean): boolean => {
      const raw = annotationOf(ingress, NGINX_PREFIX + name);
      if (raw === undefined) return fallback;
      const v = goBool(raw);
      if (v !== undefined) return v;
      const msg = `annotation ${NGINX_PREFIX}${name}: "${raw}" must be "true" or "false"; ignored`;
      problems.push(problem(ref, "InvalidAnnotation", msg, "warning"));
      return fallback;
    };
    decisions.set(`${ref.namespace}/${ref.name}`, {
      sslRedirect: flag("ssl-redirect", sslRedirectDefault),
      force: flag("force-ssl-redirect", false),
      preserveTrailingSlash: flag("preserve-trailing-slash", false),
      portInRedirects: flag("use-port-in-redirects", false),
    });
  }
  return { plan: { httpsPort, tlsHosts, ingresses: decisions }, problems };
}

/** The model with the redirecting Ingress routes of `default/http` replaced by 308s to https. */
export function applySSLRedirects(model: GatewayModel, plan: SSLRedirectPlan): GatewayModel {
  const listeners = model.listeners.map((l) => (l.name === DEFAULT_HTTP_LISTENER ? redirected(l, plan) : l));
  return { ...model, listeners };
}

function redirected(listener: Listener, plan: SSLRedirectPlan): Listener {
  const virtualHosts = listener.virtualHosts.map((vh) => {
    const hasTLS = vh.match !== "Any" && namesCover(plan.tlsHosts, vh.hostname);
    let changed = false;
    const routes = vh.routes.map((r) => {
      if (r.source.kind !== "Ingress" || r.action.kind === "Redirect") return r;
      const d = plan.ingresses.get(`${r.source.namespace}/${r.source.name}`);
      if (d === undefined || !(d.force || (d.sslRedirect && hasTLS))) return r;
      changed = true;
      return toRedirect(r, plan.httpsPort, d);
    });
    return changed ? { ...vh, routes } : vh;
  });
  return { ...listener, virtualHosts };
}

function toRedirect(r: Route, httpsPort: number, d: SSLRedirectDecision): Route {
  return {
    name: r.name,
    source: r.source,
    ...(r.ruleName !== undefined ? { ruleName: r.ruleName } : {}),
    match: r.match,
    filters: [],
    action: {
      kind: "Redirect",
      scheme: "https",
      port: httpsPort,
      ...(d.preserveTrailingSlash ? {} : { stripTrailingSlash: true }),
      ...(d.portInRedirects ? { writeDefaultPort: true } : {}),
      statusCode: 308,
    },
  };
}
