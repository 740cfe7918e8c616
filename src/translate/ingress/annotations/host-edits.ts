/**
 * ingress-nginx's host-level annotations: what they do to a whole nginx `server` (one virtual host here),
 * applied to the Ingress virtual hosts once each Ingress's route edits are in (ingresses.ts):
 * - `app-root: /app` (internal/ingress/annotations/rewrite): nginx.tmpl puts `if ($uri = /) { return 302
 *   $scheme://$http_host/app; }` in the server block of each of the Ingress's hosts. It runs before any
 *   location, so here a route for exactly `/` goes first in each of those virtual hosts and wins over every
 *   `/` path of the host, the Ingress's own and others'. The query is not kept (nginx's `return`). When two
 *   Ingresses on one host ask for it, the oldest wins (nginx: the first `if` of the server), with a warning.
 * - `from-to-www-redirect: "true"` (annotations/redirect, pkg/util/ingress BuildRedirects): for each host
 *   `foo.com` of the Ingress a server `www.foo.com` (or, for `www.foo.com`, `foo.com`) answers every request
 *   with 308 (ingress-nginx's http-redirect-code) to `<scheme>://<host>:<port><request_uri>`, the request's
 *   scheme and port, the port always named, one trailing `/` dropped (ngx_srv_redirect.lua). When that other
 *   name is a host some Ingress serves, no redirect is made, with a warning (as ingress-nginx's). Wildcard
 *   hosts and rules without host have no www counterpart: a warning.
 * - `server-alias: a.com, b.com` (annotations/alias): extra `server_name`s of each of the Ingress's hosts, so
 *   the alias serves the host's whole virtual host (every Ingress's routes on it). The oldest Ingress of a
 *   host sets its aliases, a later one's are not applied (a warning, as ingress-nginx's "Aliases already
 *   configured"); an alias that a rule of some Ingress names as host is not applied (a warning), nor one
 *   already given to another host. nginx takes regular expressions and `www.foo.*` there; Gatehouse takes
 *   DNS names and `*.` wildcards (one label, as Ingress hosts), lower-cased; any other is InvalidAnnotation.
 * On HTTPS an alias or www name gets its host's certificate when that certificate is valid for it, and then
 * ssl-redirect as its host does; otherwise the default certificate and no ssl-redirect, with a warning, as
 * ingress-nginx (coverExtraNames). Canary Ingresses set none of these (ingress-nginx skips them for servers).
 */
import type * as Crypto from "node:crypto";
import type { Problem, Route, SourceRef, TLSCertificate, VirtualHost } from "../../../model/index.ts";
import { parseLocationTemplate } from "../../../model/location-template.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { type HostPattern, parseDnsPattern, parseIngressHost } from "../../common/host-patterns.ts";
import { keptPerObject } from "../../common/kept-check.ts";
import { ingressHostRouteName } from "../../common/names.ts";
import { arrayOf, creationMillis, sourceRef } from "../../common/objects.ts";
import { internalProblem, problem } from "../../common/problems.ts";
import { compareSourceAge, compareStrings, type SourceOrder } from "../../common/sort.ts";
import { namesCover } from "../../common/tls-secret.ts";
import { isCanary } from "../canary.ts";
import type { IngressTLS } from "../tls.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { type AnnotationReader, annotationReader, boolAnnotation } from "./route-edits.ts";

/** ingress-nginx's default `http-redirect-code`, which its www redirects answer with. */
const WWW_REDIRECT_CODE = 308;
/** Characters of an app-root path (RFC 3986); `$` starts an nginx variable. */
const PATH_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!&'()*+,;=%]*$/;

/** One Ingress's host-level settings, read once per Ingress object. */
interface HostSettings {
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  /** Virtual host names of its rules (`*` for a rule without host), distinct. */
  readonly hosts: readonly string[];
  readonly appRoot?: string;
  readonly fromToWWW: boolean;
  readonly aliases: readonly HostPattern[];
  readonly problems: readonly Problem[];
}

/** A name served like another host: its certificate covers it when it can (coverExtraNames). */
export interface ExtraName {
  readonly name: string;
  readonly host: string;
  readonly annotation: "server-alias" | "from-to-www-redirect";
  readonly ref: SourceRef;
}

export interface HostEdits {
  readonly virtualHosts: VirtualHost[];
  readonly extraNames: readonly ExtraName[];
  readonly problems: readonly Problem[];
}

const keptHostSettings = keptPerObject(readHostSettings);

/** The virtual hosts with every Ingress's app-root routes, aliases and www companions added. */
export function applyHostEdits(
  virtualHosts: readonly VirtualHost[],
  ingresses: readonly Ingress[],
): HostEdits {
  const problems: Problem[] = [];
  const all: HostSettings[] = [];
  for (const ingress of ingresses) {
    try {
      const s = keptHostSettings(ingress);
      if (s === undefined) continue;
      problems.push(...s.problems);
      all.push(s);
    } catch (err) {
      problems.push(internalProblem(sourceRef("Ingress", ingress ?? {}), err));
    }
  }
  if (all.length === 0) return { virtualHosts: [...virtualHosts], extraNames: [], problems };
  all.sort((a, b) => compareSourceAge(a.order, b.order));
  const hosts = new Map(virtualHosts.map((vh) => [vh.hostname, vh]));
  withAppRoots(hosts, all, problems);
  const extraNames: ExtraName[] = [];
  const added = [
    ...aliasHosts(hosts, all, problems, extraNames),
    ...wwwHosts(hosts, all, problems, extraNames),
  ];
  const out = [...hosts.values(), ...added].sort((a, b) => compareStrings(a.hostname, b.hostname));
  return { virtualHosts: out, extraNames, problems };
}

function readHostSettings(ingress: Ingress): HostSettings | undefined {
  const ref = sourceRef("Ingress", ingress);
  const problems: Problem[] = [];
  const r = annotationReader(ingress, ref, problems);
  const asked = ["app-root", "from-to-www-redirect", "server-alias"].filter((n) => r.raw(n) !== undefined);
  if (asked.length === 0) return undefined;
  if (isCanary(ingress)) {
    const message = `this canary Ingress's host annotations (${asked.join(", ")}) are not applied: a canary adds no host settings (as in ingress-nginx)`;
    return {
      ref,
      order: orderOf(ref, ingress),
      hosts: [],
      fromToWWW: false,
      aliases: [],
      problems: [problem(ref, "CanaryAnnotationIgnored", message, "warning")],
    };
  }
  const hosts: string[] = [];
  for (const rule of arrayOf(ingress.spec?.rules)) {
    const parsed = parseIngressHost(rule?.host);
    if (parsed.ok && !hosts.includes(parsed.host.hostname)) hosts.push(parsed.host.hostname);
  }
  const appRoot = readAppRoot(r);
  return {
    ref,
    order: orderOf(ref, ingress),
    hosts,
    ...(appRoot !== undefined ? { appRoot } : {}),
    fromToWWW: boolAnnotation(r, "from-to-www-redirect") === true,
    aliases: readAliases(r),
    problems,
  };
}

function orderOf(ref: SourceRef, ingress: Ingress): SourceOrder {
  return { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(ingress) };
}

/** ingress-nginx: a path (url.ParseRequestURI), never a URL with a scheme. */
function readAppRoot(r: AnnotationReader): string | undefined {
  const raw = r.raw("app-root");
  if (raw === undefined || raw.trim() === "") return undefined;
  const v = raw.trim();
  if (!v.startsWith("/"))
    return r.bad("app-root", raw, "must be a path starting with /, without scheme or host");
  const parsed = parseLocationTemplate(v);
  if (!parsed.ok) return r.bad("app-root", raw, parsed.message);
  if (!parsed.parts.every((p) => !("text" in p) || PATH_CHARS.test(p.text)))
    return r.bad(
      "app-root",
      raw,
      "holds characters a URL path cannot (spaces, quotes, <>, \\, ^, `, {}, |, non-ASCII)",
    );
  return v;
}

/** Comma-separated, trimmed, distinct, sorted (as ingress-nginx); each a DNS name or `*.` wildcard. */
function readAliases(r: AnnotationReader): HostPattern[] {
  const raw = r.raw("server-alias");
  if (raw === undefined) return [];
  const names = [
    ...new Set(
      raw
        .split(",")
        .map((a) => a.trim().toLowerCase())
        .filter(Boolean),
    ),
  ].sort();
  const out: HostPattern[] = [];
  for (const name of names) {
    const parsed = parseDnsPattern(name.endsWith(".") ? name.slice(0, -1) : name, "WildcardOneLabel");
    if (parsed.ok) out.push(parsed.host);
    else if (name.startsWith("~"))
      r.bad("server-alias", name, "nginx regular expressions are not served here");
    else if (name.endsWith(".*")) r.bad("server-alias", name, "nginx trailing wildcards are not served here");
    else r.bad("server-alias", name, parsed.message);
  }
  return out;
}

/** The oldest app-root of each host, as a route for exactly `/` before all the host's routes. */
function withAppRoots(
  hosts: Map<string, VirtualHost>,
  all: readonly HostSettings[],
  problems: Problem[],
): void {
  const by = new Map<string, SourceRef>();
  for (const s of all) {
    if (s.appRoot === undefined) continue;
    for (const host of s.hosts) {
      const vh = hosts.get(host);
      if (vh === undefined) continue;
      const first = by.get(host);
      if (first !== undefined) {
        const message = `annotation ${NGINX_PREFIX}app-root: host ${host} already has the app-root of Ingress ${first.namespace}/${first.name} (older); not applied there`;
        problems.push(problem(s.ref, "AnnotationConflict", message, "warning"));
        continue;
      }
      by.set(host, s.ref);
      const route: Route = {
        name: ingressHostRouteName(s.ref.namespace, s.ref.name, "app-root"),
        source: s.ref,
        match: { path: { type: "Exact", value: "/" }, headers: [], queryParams: [] },
        filters: [],
        action: { kind: "Redirect", location: `$scheme://$http_host${s.appRoot}`, statusCode: 302 },
      };
      hosts.set(host, { ...vh, routes: [route, ...vh.routes] });
    }
  }
}

/** Alias virtual hosts: the oldest Ingress of a host names them; each serves that host's routes. */
function aliasHosts(
  hosts: ReadonlyMap<string, VirtualHost>,
  all: readonly HostSettings[],
  problems: Problem[],
  extraNames: ExtraName[],
): VirtualHost[] {
  const setBy = new Map<string, SourceRef>();
  const wanted: { host: string; s: HostSettings }[] = [];
  for (const s of all) {
    if (s.aliases.length === 0) continue;
    for (const host of s.hosts) {
      if (!hosts.has(host)) continue;
      const first = setBy.get(host);
      if (first !== undefined) {
        const message = `annotation ${NGINX_PREFIX}server-alias: host ${host} already has the aliases of Ingress ${first.namespace}/${first.name} (older); not applied there`;
        problems.push(problem(s.ref, "AnnotationConflict", message, "warning"));
        continue;
      }
      setBy.set(host, s.ref);
      wanted.push({ host, s });
    }
  }
  // nginx keeps the first server (by name) that names an alias.
  wanted.sort((a, b) => compareStrings(a.host, b.host));
  const out = new Map<string, VirtualHost>();
  for (const { host, s } of wanted) {
    const vh = hosts.get(host) as VirtualHost;
    for (const alias of s.aliases) {
      if (alias.hostname === host) continue;
      const skip = (why: string) => {
        const message = `annotation ${NGINX_PREFIX}server-alias: alias ${alias.hostname} of host ${host} ${why}; not applied`;
        problems.push(problem(s.ref, "AnnotationConflict", message, "warning"));
      };
      if (hosts.has(alias.hostname)) skip("is a host an Ingress rule serves");
      else if (out.has(alias.hostname)) skip("is already an alias of another host");
      else {
        out.set(alias.hostname, { hostname: alias.hostname, match: alias.match, routes: vh.routes });
        extraNames.push({ name: alias.hostname, host, annotation: "server-alias", ref: s.ref });
      }
    }
  }
  return [...out.values()];
}

/** The www (or bare) companion of each host asking for it, answering 308 to the host. */
function wwwHosts(
  hosts: ReadonlyMap<string, VirtualHost>,
  all: readonly HostSettings[],
  problems: Problem[],
  extraNames: ExtraName[],
): VirtualHost[] {
  const taken = new Set(extraNames.map((e) => e.name));
  const out: VirtualHost[] = [];
  const done = new Set<string>();
  for (const s of all) {
    if (!s.fromToWWW) continue;
    for (const host of s.hosts) {
      const vh = hosts.get(host);
      if (vh === undefined || done.has(host)) continue;
      done.add(host);
      const skip = (why: string, severity: Problem["severity"] = "warning") => {
        const message = `annotation ${NGINX_PREFIX}from-to-www-redirect: ${why}; no redirect made`;
        problems.push(problem(s.ref, "AnnotationConflict", message, severity));
      };
      if (vh.match !== "Exact") {
        skip(`host ${host} is not a single name, it has no www counterpart`);
        continue;
      }
      const from = host.startsWith("www.") ? host.slice(4) : `www.${host}`;
      const parsed = parseIngressHost(from);
      if (!parsed.ok || parsed.host.match !== "Exact") skip(`${from} is not a host name`);
      else if (hosts.has(from))
        skip(`${from} is a host an Ingress rule serves, it is not redirected to ${host}`);
      else if (taken.has(from)) skip(`${from} is an alias of a host already`);
      else {
        taken.add(from);
        const route: Route = {
          name: ingressHostRouteName(s.ref.namespace, s.ref.name, "from-to-www"),
          source: s.ref,
          match: { path: { type: "Prefix", value: "/" }, headers: [], queryParams: [] },
          filters: [],
          action: {
            kind: "Redirect",
            hostname: host,
            stripTrailingSlash: true,
            writeDefaultPort: true,
            statusCode: WWW_REDIRECT_CODE,
          },
        };
        out.push({ hostname: from, match: "Exact", routes: [route] });
        extraNames.push({ name: from, host, annotation: "from-to-www-redirect", ref: s.ref });
      }
    }
  }
  return out;
}

/**
 * `tls` with each extra name added to the certificate of the host it is served like, when that
 * certificate is valid for it (and to the hosts ssl-redirect applies to); a name its host's certificate
 * does not cover gets the default certificate, with a warning. A name with a certificate of its own keeps it.
 */
export function coverExtraNames(tls: IngressTLS, extraNames: readonly ExtraName[]): IngressTLS {
  if (extraNames.length === 0 || tls.certificates.length === 0) return tls;
  const certificates = [...tls.certificates];
  const tlsHosts = [...tls.tlsHosts];
  const problems = [...tls.problems];
  for (const e of extraNames) {
    if (namesCover(tlsHosts, e.name)) continue;
    const i = servingCertificate(certificates, e.host);
    const cert = i < 0 ? undefined : certificates[i];
    if (cert === undefined) continue;
    if (!namesCover(dnsNamesOf(cert.certPem), e.name)) {
      const message = `annotation ${NGINX_PREFIX}${e.annotation}: the certificate of ${cert.source.kind} ${cert.source.namespace}/${cert.source.name} (host ${e.host}) is not valid for ${e.name}; on HTTPS ${e.name} gets the default certificate and no ssl-redirect`;
      problems.push(problem(e.ref, "CertificateHostMismatch", message, "warning"));
      continue;
    }
    certificates[i] = { ...cert, hostnames: [...cert.hostnames, e.name] };
    tlsHosts.push(e.name);
  }
  return { ...tls, certificates, tlsHosts, problems };
}

/** The certificate SNI gives `host`: one naming it exactly, else one whose wildcard covers it; -1: none. */
function servingCertificate(certificates: readonly TLSCertificate[], host: string): number {
  const exact = certificates.findIndex((c) => c.hostnames.includes(host));
  if (exact >= 0) return exact;
  return certificates.findIndex((c) => c.hostnames.length > 0 && namesCover(c.hostnames, host));
}

const dnsNames = new Map<string, readonly string[]>();

/** The subjectAltName DNS names of a PEM certificate (already checked by tls.ts), lower-case. */
function dnsNamesOf(certPem: string): readonly string[] {
  const hit = dnsNames.get(certPem);
  if (hit !== undefined) return hit;
  const { X509Certificate } = require("node:crypto") as typeof Crypto;
  let names: string[] = [];
  try {
    names = (new X509Certificate(certPem).subjectAltName ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.startsWith("DNS:"))
      .map((s) => s.slice(4).toLowerCase());
  } catch {
    // not a certificate: covers nothing
  }
  if (dnsNames.size > 256) dnsNames.clear();
  dnsNames.set(certPem, names);
  return names;
}
