/**
 * ingress-nginx's `ssl-passthrough: "true"` (with the controller's `--enable-ssl-passthrough`, as there):
 * TLS to the Ingress's hosts on the HTTPS port is not terminated but piped, chosen by the ClientHello's
 * SNI, to the backend of the host's `/` path, the same Service port (ingress-nginx's passthrough takes
 * the `/` location's backend). Plain HTTP to those hosts is served as before. One passthrough listener on
 * the HTTPS port holds every such host, and shares the port with the HTTPS listener (the data plane picks
 * passthrough for these names, termination for the rest).
 * An Ingress that asks for access controls (an AuthPolicy, rate limits) is not passed through: a piped
 * connection cannot carry them (an error; never open).
 * Without `--enable-ssl-passthrough` the annotation asks for nothing ingress-nginx would do either: a
 * warning says so. A host with no `/` path, or a wildcard host (SNI routes match `*.` over any labels,
 * an Ingress wildcard one label only), is reported and not passed through.
 */
import type { PassthroughListener, Problem, SNIRoute, VirtualHost } from "../../model/index.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import {
  DEFAULT_LISTENER_SOURCE,
  DEFAULT_PASSTHROUGH_LISTENER,
  ingressPassthroughRouteName,
} from "../common/names.ts";
import { annotationOf, arrayOf, sourceRef } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import { NGINX_PREFIX } from "./annotations/nginx-annotations.ts";
import { goBool } from "./annotations/route-edits.ts";
import { ownGuards } from "./own-guards.ts";

export function ingressPassthrough(
  ingresses: readonly Ingress[],
  virtualHosts: readonly VirtualHost[],
  /** Rule route name → its path as written (regex-paths.ts may have turned `/` into a pattern). */
  written: ReadonlyMap<string, string>,
  snapshot: ResourceSnapshot,
  httpsPort: number,
  enabled: boolean,
): { listener?: PassthroughListener; problems: Problem[] } {
  const problems: Problem[] = [];
  const routes: SNIRoute[] = [];
  for (const ingress of ingresses) {
    if (goBool(annotationOf(ingress, `${NGINX_PREFIX}ssl-passthrough`) ?? "") !== true) continue;
    const ref = sourceRef("Ingress", ingress);
    const warn = (reason: string, message: string) => problems.push(problem(ref, reason, message, "warning"));
    if (!enabled) {
      warn(
        "SSLPassthroughDisabled",
        `annotation ${NGINX_PREFIX}ssl-passthrough: needs --enable-ssl-passthrough (as in ingress-nginx); TLS to these hosts is terminated as usual`,
      );
      continue;
    }
    const own = ownGuards(ingress, snapshot);
    if (own.length > 0) {
      const message = `annotation ${NGINX_PREFIX}ssl-passthrough: the Ingress asks for access controls (${own.join(", ")}) that a connection piped unopened cannot carry; not passed through (never open)`;
      problems.push(problem(ref, "SSLPassthroughGuarded", message));
      continue;
    }
    const hosts = [...new Set(arrayOf(ingress.spec?.rules).map((r) => r?.host ?? ""))];
    for (const host of hosts) {
      if (host === "" || host.startsWith("*.")) {
        warn(
          "SSLPassthroughHost",
          `ssl-passthrough for host "${host || "(none)"}": only named hosts can be passed through (SNI names a host); not passed through`,
        );
        continue;
      }
      const vh = virtualHosts.find((v) => v.hostname === host);
      const root = vh?.routes.find(
        (r) =>
          r.source.kind === "Ingress" &&
          r.source.namespace === ref.namespace &&
          r.source.name === ref.name &&
          (written.get(r.name) ?? r.match.path.value) === "/" &&
          r.match.headers.length === 0 &&
          r.action.kind === "Forward",
      );
      const backendId = root?.action.kind === "Forward" ? root.action.backends[0]?.backendId : undefined;
      if (backendId === undefined) {
        warn(
          "SSLPassthroughHost",
          `ssl-passthrough for host ${host}: the Ingress has no "/" path forwarding to a backend (or it fails closed); not passed through`,
        );
        continue;
      }
      if (routes.some((r) => r.hostnames.some((h) => h.hostname === host))) {
        warn(
          "SSLPassthroughHost",
          `ssl-passthrough for host ${host}: another Ingress passes it through already`,
        );
        continue;
      }
      routes.push({
        name: ingressPassthroughRouteName(ref.namespace, ref.name, host),
        source: ref,
        hostnames: [{ hostname: host, match: "Exact" }],
        backends: [{ backendId, weight: 1 }],
      });
    }
  }
  if (routes.length === 0) return { problems };
  const listener: PassthroughListener = {
    name: DEFAULT_PASSTHROUGH_LISTENER,
    address: "",
    port: httpsPort,
    source: DEFAULT_LISTENER_SOURCE,
    routes,
  };
  return { listener, problems };
}
