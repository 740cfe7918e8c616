/**
 * Every Ingress of our class as the two default listeners: the Ingress half of translate, beside
 * translateGatewayAPI (gateway/gateway.ts). The order of the steps is fixed:
 * 1. select the Ingresses of our class (ingress-class.ts);
 * 2. each Ingress alone: hosts, paths and backends validated into route candidates (ingress.ts, kept
 *    between translates by memo.ts), a bug in one costing only that one; its annotations audited
 *    (annotations/audit.ts);
 * 3. rule conflicts across all Ingresses: same host, path type and path, oldest wins (path-conflicts.ts);
 * 4. default backends placed where no rule serves `Prefix /`, then their conflicts (default-backend.ts);
 * 5. backends resolved through Services and EndpointSlices, routes grouped into virtual hosts and
 *    sorted by precedence (virtual-hosts.ts, common/backends.ts, common/sort.ts); canary Ingresses,
 *    left out of steps 3–4, join the main routes of their paths (canary.ts); hosts with use-regex or
 *    rewrite-target get ingress-nginx's regex paths (annotations/regex-paths.ts);
 * 6. each Ingress's honoured annotations edit its routes (annotations/families.ts, and custom-headers.ts,
 *    which reads the ConfigMap the Ingress names; service-upstream.ts
 *    points them at their Services' cluster IPs; error-pages.ts adds custom-http-errors' error backends),
 *    and the host-level ones edit the virtual hosts
 *    (annotations/host-edits.ts: app-root, server-alias, from-to-www-redirect); then the routes of
 *    Ingresses asking for access controls Gatehouse does not enforce answer 403 (annotations/audit.ts),
 *    unless the operator allows them open;
 * 7. `backend-protocol` and `proxy-ssl-*`: the routes of Ingresses asking for h2c or TLS point at their own
 *    variants of their backends, per listener (backends/backend-protocol.ts, backend-variants.ts);
 * 8. the default HTTP listener, always present so the gateway listens even with no routes;
 * 9. `spec.tls`: the certificates of the default HTTPS listener, which serves the same virtual hosts
 *    (tls.ts); an alias or www name takes its host's certificate where that covers it (host-edits.ts);
 *    `ssl-passthrough` hosts, with `--enable-ssl-passthrough`, a passthrough listener on the HTTPS port
 *    (ssl-passthrough.ts).
 */
import type {
  Backend,
  Listener,
  PassthroughListener,
  Problem,
  RouteAction,
  VirtualHost,
} from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { DEFAULT_HTTP_LISTENER, DEFAULT_LISTENER_SOURCE } from "../common/names.ts";
import { arrayOf, nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { internalProblem } from "../common/problems.ts";
import type { SnapshotIndex } from "../common/snapshot-index.ts";
import { compareStrings } from "../common/sort.ts";
import { applyClientCertificates, withClientCAs } from "./access/client-certificate-hosts.ts";
import type { SecretSources } from "./access/client-certificates.ts";
import { auditAnnotations, failClosed, failClosedAction, unenforcedProblem } from "./annotations/audit.ts";
import { configMapIndex, customHeadersEdits, withCustomHeaders } from "./annotations/custom-headers.ts";
import { ingressRouteEdits } from "./annotations/families.ts";
import { applyHostEdits, coverExtraNames } from "./annotations/host-edits.ts";
import { applyRegexPaths } from "./annotations/regex-paths.ts";
import { applyRouteEdits, type RouteEdit } from "./annotations/route-edits.ts";
import { routeToClusterIPs } from "./annotations/service-upstream.ts";
import {
  asksBackendProtocol,
  type IngressBackendSettings,
  readBackendSettings,
} from "./backends/backend-protocol.ts";
import { applyBackendProtocols } from "./backends/backend-variants.ts";
import {
  canaryEditsIgnored,
  canaryGuardsProblem,
  closeCanaryRoutes,
  isCanary,
  joinCanaries,
} from "./canary.ts";
import { hostsWithRootPrefix, placeDefaultBackends } from "./default-backend.ts";
import { placeDefaultBackendService } from "./default-backend-service.ts";
import { applyErrorPages } from "./error-pages.ts";
import type { IngressTranslation } from "./ingress.ts";
import { type ClassSelection, selectIngresses } from "./ingress-class.ts";
import { translateIngressKept } from "./memo.ts";
import { ownGuards } from "./own-guards.ts";
import { dropConflicts } from "./path-conflicts.ts";
import { ingressPassthrough } from "./ssl-passthrough.ts";
import { type IngressTLS, type IngressTLSOptions, ingressHTTPSListener, translateIngressTLS } from "./tls.ts";
import { buildVirtualHosts } from "./virtual-hosts.ts";

export interface IngressesOptions extends ClassSelection, IngressTLSOptions {
  /** Port of the default HTTP listener (`--http-port`). */
  readonly httpPort: number;
  /** Serve Ingresses whose access-control annotations are not enforced (`--allow-unenforced-annotations`). */
  readonly allowUnenforcedAnnotations: boolean;
  /** Ingress `ssl-passthrough` is served (`--enable-ssl-passthrough`). */
  readonly enableSslPassthrough: boolean;
  /** Header names `custom-headers` may set (`--global-allowed-response-headers`). */
  readonly allowedResponseHeaders: readonly string[];
  /** `namespace/name` of the Service unmatched requests go to (`--default-backend-service`). */
  readonly defaultBackendService?: string;
}

export interface IngressesTranslation {
  /** The Ingresses of our class, sorted by namespace/name (ssl-redirect reads their annotations). */
  readonly ingresses: readonly Ingress[];
  /** The default HTTP listener. */
  readonly http: Listener;
  /** The default HTTPS listener; absent when no Ingress asks for TLS with a usable certificate. */
  readonly https: Listener | undefined;
  readonly tls: IngressTLS;
  /** Every backend a route points at, keys sorted. */
  readonly backends: Record<string, Backend>;
  /** The HTTPS port's passthrough listener for `ssl-passthrough` hosts; absent: none. */
  readonly passthrough?: PassthroughListener;
  /** Each Ingress's own problems, then conflicts, default backends, backends and TLS, in that order. */
  readonly problems: readonly Problem[];
}

export function translateIngresses(
  snapshot: ResourceSnapshot,
  index: SnapshotIndex,
  opts: IngressesOptions,
): IngressesTranslation {
  const problems: Problem[] = [];
  const ingresses = selectIngresses(arrayOf(snapshot?.ingresses), arrayOf(snapshot?.ingressClasses), opts);
  const translations: IngressTranslation[] = [];
  const closed = new Map<string, RouteAction>();
  const edited = new Map<string, RouteEdit>();
  const canaries: { ingress: Ingress; t: IngressTranslation }[] = [];
  const configMaps = configMapIndex(snapshot?.configMaps, snapshot?.unreadable);
  const secrets = secretSources(snapshot);
  const protocols = new Map<string, IngressBackendSettings>();
  for (const ingress of ingresses) {
    try {
      const t = translateIngressKept(ingress);
      if (isCanary(ingress)) canaries.push({ ingress, t });
      else translations.push(t);
      const audit = auditAnnotations(ingress, t.ref);
      const own = ingressRouteEdits(ingress, t.ref);
      const headers = customHeadersEdits(ingress, t.ref, configMaps, opts.allowedResponseHeaders);
      const edits = { edit: withCustomHeaders(own.edit, headers.edit) };
      problems.push(...t.problems, ...audit.problems, ...own.problems, ...headers.problems);
      if (isCanary(ingress)) {
        const guards = ownGuards(ingress, snapshot);
        if (guards.length > 0) {
          problems.push(canaryGuardsProblem(t.ref, guards));
          closed.set(`${t.ref.namespace}/${t.ref.name}`, failClosedAction(t.ref, guards));
        }
      }
      if (isCanary(ingress) && asksBackendProtocol(ingress)) problems.push(canaryEditsIgnored(t.ref));
      else if (!isCanary(ingress)) {
        const protocol = readBackendSettings(ingress, t.ref, secrets);
        problems.push(...protocol.problems);
        if (protocol.settings) protocols.set(`${t.ref.namespace}/${t.ref.name}`, protocol.settings);
      }
      if (edits.edit !== undefined && isCanary(ingress)) problems.push(canaryEditsIgnored(t.ref));
      else if (edits.edit !== undefined) edited.set(`${t.ref.namespace}/${t.ref.name}`, edits.edit);
      if (audit.unenforced.length > 0) {
        problems.push(unenforcedProblem(t.ref, audit.unenforced, opts.allowUnenforcedAnnotations));
        if (!opts.allowUnenforcedAnnotations)
          closed.set(`${t.ref.namespace}/${t.ref.name}`, failClosedAction(t.ref, audit.unenforced));
      }
    } catch (err) {
      problems.push(internalProblem(sourceRef("Ingress", ingress ?? {}), err));
    }
  }
  // Input order must not matter: later steps keep the order they are given.
  translations.sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  );
  const rules = dropConflicts(translations.flatMap((t) => t.routes));
  const defaults = dropConflicts(placeDefaultBackends(translations, hostsWithRootPrefix(rules.kept)));
  const placed = [...rules.kept, ...defaults.kept];
  const global = placeDefaultBackendService(opts.defaultBackendService, translations, placed, index);
  const candidates = [...placed, ...global.candidates];
  const built = joinCanaries(buildVirtualHosts(candidates, index), canaries, index);
  const written = new Map(rules.kept.map((c) => [c.name, c.written ?? c.path.value]));
  const regex = applyRegexPaths(
    built.virtualHosts,
    ingresses.filter((i) => !isCanary(i)),
    written,
  );
  const routed = routeToClusterIPs(
    applyRouteEdits(regex.virtualHosts, edited),
    edited,
    built.backends,
    index,
  );
  const mainIngresses = ingresses.filter((i) => !isCanary(i));
  const paged = applyErrorPages(
    routed.virtualHosts,
    mainIngresses,
    routed.backends,
    index,
    opts.defaultBackendService,
  );
  // Client certificates (auth-tls-*), a host's setting: before aliases copy the host's routes.
  const mtls = applyClientCertificates(
    paged.virtualHosts,
    ingresses.filter((i) => !isCanary(i)),
    secrets,
  );
  // app-root, server-alias, from-to-www-redirect: the hosts' routes as edited, before failing closed.
  const hosts = applyHostEdits(mtls.virtualHosts, ingresses);
  // Fail closed last: its 403 wins over any action an annotation asked for.
  const virtualHosts = closeCanaryRoutes(failClosed(hosts.virtualHosts, closed), built, closed);
  const passthrough = ingressPassthrough(
    ingresses.filter((i) => !isCanary(i)),
    virtualHosts,
    written,
    snapshot,
    opts.httpsPort,
    opts.enableSslPassthrough,
  );
  // backend-protocol last, per listener (AUTO_HTTP differs between them), after passthrough read the backends.
  const spoken = applyBackendProtocols(virtualHosts, protocols, paged.backends);
  const covered = coverExtraNames(ingressTLS(ingresses, snapshot, opts), hosts.extraNames);
  const aliases = hosts.extraNames.filter((e) => e.annotation === "server-alias");
  const tls = { ...covered, certificates: withClientCAs(covered.certificates, mtls.hostCAs, aliases) };
  problems.push(
    ...rules.problems,
    ...defaults.problems,
    ...global.problems,
    ...built.problems,
    ...regex.problems,
    ...routed.problems,
    ...paged.problems,
    ...mtls.problems,
    ...hosts.problems,
    ...passthrough.problems,
    ...tls.problems,
    ...spoken.problems,
  );
  return {
    ingresses,
    http: httpListener(opts.httpPort, spoken.http),
    https: ingressHTTPSListener(tls, opts.httpsPort, DEFAULT_LISTENER_SOURCE, spoken.https),
    tls,
    backends: spoken.backends,
    ...(passthrough.listener ? { passthrough: passthrough.listener } : {}),
    problems,
  };
}

/** The Secrets a client-certificate CA may come from, and those the source could not read. */
function secretSources(snapshot: ResourceSnapshot): SecretSources {
  const secrets = new Map<string, Secret>();
  for (const s of arrayOf(snapshot?.secrets))
    if (s?.metadata) secrets.set(`${namespaceOf(s)}/${nameOf(s)}`, s);
  return { secrets, unreadable: arrayOf(snapshot?.unreadable) };
}

/** The Ingress TLS half; a bug there costs TLS only (the hosts stay on HTTP). */
function ingressTLS(
  ingresses: readonly Ingress[],
  snapshot: ResourceSnapshot,
  opts: IngressTLSOptions,
): IngressTLS {
  try {
    return translateIngressTLS(ingresses, arrayOf(snapshot?.secrets), opts);
  } catch (err) {
    const problems = [internalProblem(DEFAULT_LISTENER_SOURCE, err)];
    return { certificates: [], wanted: false, tlsHosts: [], problems };
  }
}

function httpListener(port: number, virtualHosts: VirtualHost[]): Listener {
  return {
    name: DEFAULT_HTTP_LISTENER,
    address: "",
    port,
    protocol: "HTTP",
    source: DEFAULT_LISTENER_SOURCE,
    virtualHosts,
  };
}
