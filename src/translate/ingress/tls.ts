/**
 * Ingress `spec.tls` → the certificates of the default HTTPS listener (`default/https`, `--https-port`).
 * Decisions (docs/tls.md):
 * - Like ingress-nginx, the HTTPS listener carries every Ingress virtual host, TLS or not; hosts without
 *   a certificate of their own get the default certificate. It is opened when some Ingress of ours has
 *   `spec.tls` or a default certificate Secret is configured (so a gateway with no TLS in use does not
 *   bind the HTTPS port).
 * - The default certificate comes first (no hostnames: the SNI fallback): the Secret named by
 *   `--default-certificate`, else the self-signed one the process generated at start.
 * - `spec.tls[].hosts` name the SNI names of the entry's Secret (same namespace as the Ingress); an entry
 *   with no hosts serves its certificate for the certificate's own DNS names.
 * - A host claimed by two Ingresses with different Secrets goes to the oldest (as rule conflicts do).
 * - A Secret that cannot be served (missing, wrong type, bad PEM, key mismatch, expired) is an error
 *   Problem naming the Ingress and the Secret; its hosts get the default certificate and no ssl-redirect.
 * - `ssl-ciphers` gives a host's SNI entry its own TLS 1.2 cipher list (annotations/ssl-ciphers.ts).
 */
import type { Listener, Problem, SourceRef, TLSCertificate, VirtualHost } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import type { Ingress } from "../../sources/schema/networking.ts";
import { parseIngressHost } from "../common/host-patterns.ts";
import { DEFAULT_HTTPS_LISTENER, DEFAULT_LISTENER_SOURCE } from "../common/names.ts";
import { arrayOf, creationMillis, nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { problem } from "../common/problems.ts";
import { compareSourceAge } from "../common/sort.ts";
import { namesCover, readTLSSecret } from "../common/tls-secret.ts";
import { withHostCiphers } from "./annotations/ssl-ciphers.ts";

export interface IngressTLSOptions {
  readonly httpsPort: number;
  /** `namespace/name` of a TLS Secret served to clients no other certificate matches. */
  readonly defaultCertificate?: string;
  /** The certificate generated at start, used when no default Secret is configured or usable. */
  readonly generatedCertificate?: { readonly certPem: string; readonly keyPem: string };
  /** Reject certificates outside their validity period at this time; absent: no clock check. */
  readonly nowMs?: number;
}

export interface IngressTLS {
  /** Default certificate first (when there is one), then one entry per Ingress TLS section served. */
  readonly certificates: readonly TLSCertificate[];
  /** The default certificate alone (also offered on Gateway HTTPS ports, translate.ts). */
  readonly defaultCertificate?: TLSCertificate;
  /** Whether `default/https` should exist (it also needs at least one certificate). */
  readonly wanted: boolean;
  /** Host names (and `*.` patterns) that have a certificate of their own: ssl-redirect applies to them. */
  readonly tlsHosts: readonly string[];
  readonly problems: readonly Problem[];
}

export const generatedCertificateSource: SourceRef = {
  kind: "Gatehouse",
  namespace: "",
  name: "generated-default-certificate",
};

/** The TLS sections of the selected Ingresses, oldest Ingress first. */
export function translateIngressTLS(
  ingresses: readonly Ingress[],
  secrets: readonly Secret[],
  opts: IngressTLSOptions,
): IngressTLS {
  const byRef = new Map<string, Secret>();
  for (const s of secrets) if (s?.metadata) byRef.set(`${namespaceOf(s)}/${nameOf(s)}`, s);
  const problems: Problem[] = [];
  const certificates: TLSCertificate[] = [];
  const fallback = defaultCertificate(byRef, opts, problems);
  if (fallback) certificates.push(fallback);
  const owner = new Map<string, string>(); // host → `ns/secret` that serves it
  const ordered = [...ingresses].sort((a, b) => compareSourceAge(orderOf(a), orderOf(b)));
  for (const ingress of ordered) {
    const ref = sourceRef("Ingress", ingress);
    arrayOf(ingress.spec?.tls).forEach((entry, i) => {
      const field = `spec.tls[${i}]`;
      const secretRef = `${ref.namespace}/${entry?.secretName ?? ""}`;
      const secret = entry?.secretName ? byRef.get(secretRef) : undefined;
      const read = secret ? readTLSSecret(secret, opts.nowMs) : entry?.secretName ? "not found" : undefined;
      if (typeof read !== "object") {
        const why = read === undefined ? "secretName is empty" : `Secret ${secretRef} ${read}`;
        const msg = `${field}: ${why}; its hosts get the default certificate and no ssl-redirect`;
        problems.push(problem(ref, "InvalidTLSSecret", msg));
        return;
      }
      const hostnames: string[] = [];
      const given = arrayOf(entry.hosts);
      for (const [j, raw] of (given.length ? given : read.dnsNames).entries()) {
        const parsed = parseIngressHost(raw);
        if (!parsed.ok || parsed.host.match === "Any") {
          const why = parsed.ok ? "must not be empty" : parsed.message;
          const where = given.length
            ? `${field}.hosts[${j}] "${raw}"`
            : `${field}: certificate name "${raw}"`;
          problems.push(problem(ref, "InvalidHost", `${where}: ${why}; ignored`, "warning"));
          continue;
        }
        const host = parsed.host.hostname;
        const taken = owner.get(host);
        if (taken !== undefined && taken !== secretRef) {
          const msg = `${field}: host ${host} already has the certificate of Secret ${taken} (older Ingress); Secret ${secretRef} not used for it`;
          problems.push(problem(ref, "TLSHostConflict", msg, "warning"));
          continue;
        }
        if (taken === undefined) owner.set(host, secretRef);
        if (!namesCover(read.dnsNames, host)) {
          const msg = `${field}: the certificate of Secret ${secretRef} is not valid for host ${host} (names: ${read.dnsNames.join(", ") || "none"}); served anyway`;
          problems.push(problem(ref, "CertificateHostMismatch", msg, "warning"));
        }
        if (!hostnames.includes(host)) hostnames.push(host);
      }
      if (hostnames.length === 0) return;
      const source = { kind: "Secret", namespace: ref.namespace, name: entry.secretName as string };
      certificates.push({ source, hostnames, certPem: read.certPem, keyPem: read.keyPem });
    });
  }
  return {
    certificates: withHostCiphers(certificates, fallback, ordered, problems),
    ...(fallback ? { defaultCertificate: fallback } : {}),
    wanted: opts.defaultCertificate !== undefined || ingresses.some((i) => arrayOf(i.spec?.tls).length > 0),
    tlsHosts: [...owner.keys()],
    problems,
  };
}

/** The Secret named by `--default-certificate` when usable (else a Problem), or the generated one. */
function defaultCertificate(
  secrets: ReadonlyMap<string, Secret>,
  opts: IngressTLSOptions,
  problems: Problem[],
): TLSCertificate | undefined {
  if (opts.defaultCertificate !== undefined) {
    const [namespace = "", name = ""] = opts.defaultCertificate.split("/");
    const secret = secrets.get(`${namespace}/${name}`);
    const read = secret ? readTLSSecret(secret, opts.nowMs) : "not found";
    if (typeof read === "object")
      return { source: { kind: "Secret", namespace, name }, hostnames: [], ...pems(read) };
    const fallback = opts.generatedCertificate
      ? "the generated certificate is used"
      : "no default certificate";
    const msg = `default certificate: Secret ${namespace}/${name} ${read}; ${fallback}`;
    problems.push(problem(DEFAULT_LISTENER_SOURCE, "InvalidDefaultCertificate", msg));
  }
  const gen = opts.generatedCertificate;
  return gen ? { source: generatedCertificateSource, hostnames: [], ...pems(gen) } : undefined;
}

function pems(p: { readonly certPem: string; readonly keyPem: string }) {
  return { certPem: p.certPem, keyPem: p.keyPem };
}

function orderOf(ingress: Ingress) {
  return { namespace: namespaceOf(ingress), name: nameOf(ingress), createdMs: creationMillis(ingress) };
}

/** `default/https` with the same virtual hosts as `default/http`, or undefined when not wanted or no
 * certificate is available. */
export function ingressHTTPSListener(
  tls: IngressTLS,
  port: number,
  source: SourceRef,
  virtualHosts: readonly VirtualHost[],
): Listener | undefined {
  if (!tls.wanted || tls.certificates.length === 0) return undefined;
  return {
    name: DEFAULT_HTTPS_LISTENER,
    address: "",
    port,
    protocol: "HTTPS",
    tls: { certificates: tls.certificates },
    source,
    virtualHosts,
  };
}
