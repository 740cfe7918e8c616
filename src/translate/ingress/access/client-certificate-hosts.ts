/**
 * ingress-nginx's client certificates are a host's (server block's) setting: as in its controller
 * (createServers), the oldest Ingress that names a host and sets `auth-tls-secret` decides for every path
 * of that host, whichever Ingress the path comes from; a later Ingress asking for other settings is
 * reported, not applied. Here:
 * - every Ingress route of the host's virtual host (aliases included: they share the server block) gets
 *   the demand (`Route.clientCertificate`), checked per request by both fronts' guards;
 * - the host's SNI entry on the HTTPS listener carries the CAs (`TLSCertificate.clientCAPem`), split off
 *   from a certificate that serves other names too (or made from the default certificate for a host
 *   without its own), so a handshake for this name is verified against these CAs and no other's.
 * A rule without a host (ingress-nginx's catch-all server) cannot have an SNI entry of its own: its routes
 * answer 403 rather than serve without the check (never open).
 */
import type { Problem, Route, SourceRef, TLSCertificate, VirtualHost } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { parseIngressHost } from "../../common/host-patterns.ts";
import {
  annotationOf,
  arrayOf,
  creationMillis,
  nameOf,
  namespaceOf,
  sourceRef,
} from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { compareSourceAge } from "../../common/sort.ts";
import { namesCover } from "../../common/tls-secret.ts";
import { NGINX_PREFIX } from "../annotations/nginx-annotations.ts";
import type { AnnotationReader } from "../annotations/route-edits.ts";
import {
  type IngressClientCertificate,
  readClientCertificate,
  type SecretSources,
} from "./client-certificates.ts";

export interface ClientCertificateHosts {
  readonly virtualHosts: VirtualHost[];
  /** Host pattern (as the virtual host names it) → the CA bundle its SNI entry carries. */
  readonly hostCAs: ReadonlyMap<string, string>;
  readonly problems: readonly Problem[];
}

const ANY = "*";

/** The virtual hosts with each annotated host's routes demanding client certificates. */
export function applyClientCertificates(
  virtualHosts: readonly VirtualHost[],
  ingresses: readonly Ingress[],
  sources: SecretSources,
): ClientCertificateHosts {
  const problems: Problem[] = [];
  const hosts = new Map<string, { read: IngressClientCertificate; from: string }>();
  const order = (i: Ingress) => ({
    namespace: namespaceOf(i),
    name: nameOf(i),
    createdMs: creationMillis(i),
  });
  for (const ingress of [...ingresses].sort((a, b) => compareSourceAge(order(a), order(b)))) {
    const ref = sourceRef("Ingress", ingress);
    const read = readClientCertificate(reader(ingress, ref, problems), ref.namespace, sources);
    if (read === undefined) continue;
    const me = `${ref.namespace}/${ref.name}`;
    for (const rule of arrayOf(ingress.spec?.rules)) {
      const parsed = parseIngressHost(rule?.host ?? "");
      if (!parsed.ok) continue; // reported with the rule
      const any = parsed.host.match === "Any";
      const host = any ? ANY : parsed.host.hostname;
      const taken = hosts.get(host);
      if (taken !== undefined) {
        if (taken.from !== me && JSON.stringify(taken.read) !== JSON.stringify(read)) {
          const msg = `auth-tls annotations: host ${host} already has the client-certificate settings of Ingress ${taken.from} (older); not applied to it`;
          problems.push(problem(ref, "AnnotationConflict", msg, "warning"));
        }
        continue;
      }
      if (any) {
        const why = "auth-tls-* on a rule without a host: a handshake names no host to verify it for";
        problems.push(problem(ref, "InvalidAnnotation", `${why}, so those paths answer 403 (never open)`));
        hosts.set(host, { read: { demand: { ...read.demand, refused: why } }, from: me });
      } else hosts.set(host, { read, from: me });
    }
  }
  if (hosts.size === 0) return { virtualHosts: [...virtualHosts], hostCAs: new Map(), problems };
  const hostCAs = new Map<string, string>();
  for (const [host, { read }] of hosts) if (read.caPem !== undefined) hostCAs.set(host, read.caPem);
  const out = virtualHosts.map((vh) => {
    const demand = hosts.get(vh.match === "Any" ? ANY : vh.hostname)?.read.demand;
    if (demand === undefined) return vh;
    const routes = vh.routes.map(
      (r): Route => (r.source.kind === "Ingress" ? { ...r, clientCertificate: demand } : r),
    );
    return { ...vh, routes };
  });
  return { virtualHosts: out, hostCAs, problems };
}

/** Annotations of `ingress`; each refusal's message says itself what applies instead. */
function reader(ingress: Ingress, ref: SourceRef, problems: Problem[]): AnnotationReader {
  return {
    raw: (name) => annotationOf(ingress, NGINX_PREFIX + name),
    bad: (name, value, why) => {
      const shown = value.length > 120 ? `${value.slice(0, 120)}…` : value;
      problems.push(
        problem(
          ref,
          "InvalidAnnotation",
          `annotation ${NGINX_PREFIX}${name} ${JSON.stringify(shown)}: ${why}`,
        ),
      );
      return undefined;
    },
  };
}

/**
 * The HTTPS listener's certificates with an SNI entry per host in `hostCAs` carrying its CAs (`aliases`:
 * name → the host whose settings it shares). The entry takes the certificate that would have served the
 * name: one naming it exactly, else a wildcard covering it, else the first (the default certificate).
 */
export function withClientCAs(
  certificates: readonly TLSCertificate[],
  hostCAs: ReadonlyMap<string, string>,
  aliases: readonly { readonly name: string; readonly host: string }[],
): TLSCertificate[] {
  if (hostCAs.size === 0 || certificates.length === 0) return [...certificates];
  const wanted = new Map(hostCAs);
  for (const a of aliases) {
    const ca = hostCAs.get(a.host);
    if (ca !== undefined && !wanted.has(a.name)) wanted.set(a.name, ca);
  }
  let out = [...certificates];
  for (const [host, caPem] of wanted) {
    const serving =
      out.find((c) => c.hostnames.includes(host)) ??
      out.find((c) =>
        namesCover(
          c.hostnames.filter((n) => n.startsWith("*.")),
          host,
        ),
      ) ??
      (out[0] as TLSCertificate);
    const own: TLSCertificate = { ...serving, hostnames: [host], clientCAPem: caPem };
    // The name leaves the entry that had it (the first to claim a name wins its SNI lookup). The first
    // entry stays, as the fallback; another left without names would read as a catch-all
    // (listener-merge.ts fallbackFirst), so it goes.
    out = out.flatMap((c, i) => {
      if (c !== serving || !c.hostnames.includes(host)) return [c];
      const rest = c.hostnames.filter((n) => n !== host);
      return rest.length > 0 || i === 0 ? [{ ...c, hostnames: rest }] : [];
    });
    out.push(own);
  }
  return out;
}
