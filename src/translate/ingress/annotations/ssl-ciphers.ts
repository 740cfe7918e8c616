/**
 * ingress-nginx `ssl-ciphers`: the TLS 1.2 cipher list of the Ingress's hosts (nginx `ssl_ciphers` in
 * each host's server block). As in ingress-nginx (controller.go createServers), the oldest Ingress that
 * names a host and sets the annotation decides that host's list; a later one is reported, not applied.
 * A host with a certificate of its own gets it with this list; a host served by the default certificate
 * gets an SNI entry of its own with the default certificate and this list, so the list applies to the
 * host and to nothing else. TLS 1.0 and 1.1 stay refused whatever the list says, and TLS 1.3 suites are
 * fixed by BoringSSL (docs/tls.md): the list only chooses among TLS 1.2 suites.
 *
 * The value is checked as OpenSSL's cipher-list syntax (names, `!`/`-`/`+` prefixes, `+`-joined
 * aliases, `@STRENGTH`) and then by BoringSSL itself: a list it refuses (nothing matches, `@SECLEVEL`,
 * which BoringSSL does not know) is an `InvalidAnnotation` and the hosts keep Gatehouse's list; a name in
 * the list that matches no suite is reported (BoringSSL skips it silently), the rest of the list applies.
 */
import type * as Tls from "node:tls";
import type { Problem, TLSCertificate } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { parseIngressHost } from "../../common/host-patterns.ts";
import { annotationOf, arrayOf, sourceRef } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

const ANNOTATION = `${NGINX_PREFIX}ssl-ciphers`;
/** One element of an OpenSSL cipher list: a name or `+`-joined aliases, optionally prefixed. */
const ELEMENT = /^[!+-]?[A-Za-z0-9_-]+(?:\+[A-Za-z0-9_-]+)*$/;

/** Why BoringSSL refuses `list` as a whole (undefined: it takes it), and the names that match nothing. */
function checkCipherList(list: string): { refused?: string; unmatched: string[] } {
  const elements = list.split(/[:, ]+/).filter((e) => e !== "");
  if (elements.length === 0) return { refused: "is empty", unmatched: [] };
  const seclevel = elements.find((e) => e.startsWith("@SECLEVEL"));
  if (seclevel !== undefined)
    return {
      refused: `"${seclevel}" is OpenSSL's; BoringSSL, which Bun uses, has no security levels`,
      unmatched: [],
    };
  const malformed = elements.find((e) => e !== "@STRENGTH" && !ELEMENT.test(e));
  if (malformed !== undefined)
    return { refused: `"${malformed}" is not a cipher name or OpenSSL cipher-list keyword`, unmatched: [] };
  // node:tls loads only for Ingresses that set the annotation (translation starts without it).
  const { createSecureContext } = require("node:tls") as typeof Tls;
  const takes = (ciphers: string) => {
    try {
      createSecureContext({ ciphers, minVersion: "TLSv1.2" });
      return true;
    } catch {
      return false;
    }
  };
  if (!takes(list)) return { refused: "matches no TLS 1.2 cipher suite BoringSSL offers", unmatched: [] };
  const unmatched = elements
    .filter((e) => e !== "@STRENGTH")
    .map((e) => e.replace(/^[!+-]/, ""))
    .filter((name) => !takes(name));
  return { unmatched };
}

/**
 * The certificates with each annotated host's cipher list applied (split off into entries of their own),
 * reading `ingresses` oldest first. `fallback` is the default certificate, for annotated hosts without
 * one of their own (none: those hosts are reported and keep the default list).
 */
export function withHostCiphers(
  certificates: readonly TLSCertificate[],
  fallback: TLSCertificate | undefined,
  ingressesOldestFirst: readonly Ingress[],
  problems: Problem[],
): TLSCertificate[] {
  const hostCiphers = new Map<string, { ciphers: string; from: string }>();
  for (const ingress of ingressesOldestFirst) {
    const raw = annotationOf(ingress, ANNOTATION);
    if (raw === undefined || raw.trim() === "") continue;
    const ref = sourceRef("Ingress", ingress);
    const value = raw.trim();
    const { refused, unmatched } = checkCipherList(value);
    if (refused !== undefined) {
      const msg = `annotation ${ANNOTATION} ${JSON.stringify(value)}: ${refused}; its hosts keep Gatehouse's cipher list`;
      problems.push(problem(ref, "InvalidAnnotation", msg));
      continue;
    }
    if (unmatched.length > 0) {
      const msg = `annotation ${ANNOTATION}: ${unmatched.map((n) => `"${n}"`).join(", ")} ${unmatched.length === 1 ? "matches" : "match"} no cipher suite BoringSSL offers; left out, the rest of the list applies`;
      problems.push(problem(ref, "InvalidAnnotation", msg, "warning"));
    }
    const me = `${ref.namespace}/${ref.name}`;
    for (const rule of arrayOf(ingress.spec?.rules)) {
      const parsed = parseIngressHost(rule?.host ?? "");
      if (!parsed.ok || parsed.host.match === "Any") continue;
      const host = parsed.host.hostname;
      const taken = hostCiphers.get(host);
      if (taken === undefined) hostCiphers.set(host, { ciphers: value, from: me });
      else if (taken.from !== me && taken.ciphers !== value) {
        const msg = `annotation ${ANNOTATION}: host ${host} already has the cipher list of Ingress ${taken.from} (older); not applied to it`;
        problems.push(problem(ref, "AnnotationConflict", msg, "warning"));
      }
    }
  }
  if (hostCiphers.size === 0) return [...certificates];
  const out: TLSCertificate[] = [];
  const placed = new Set<string>();
  for (const cert of certificates) {
    const plain = cert.hostnames.filter((h) => !hostCiphers.has(h));
    if (plain.length === cert.hostnames.length) {
      out.push(cert);
      continue;
    }
    // Keep the fallback first even when it lost every name (it has none of its own).
    if (plain.length > 0 || cert === certificates[0]) out.push({ ...cert, hostnames: plain });
    for (const h of cert.hostnames) {
      const c = hostCiphers.get(h);
      if (c === undefined || placed.has(h)) continue;
      placed.add(h);
      out.push({ ...cert, hostnames: [h], ciphers: c.ciphers });
    }
  }
  for (const [host, c] of hostCiphers) {
    if (placed.has(host)) continue;
    if (fallback === undefined) continue; // no HTTPS listener serves it at all
    const [namespace = "", name = ""] = c.from.split("/");
    out.push({
      source: { kind: "Ingress", namespace, name },
      hostnames: [host],
      certPem: fallback.certPem,
      keyPem: fallback.keyPem,
      ciphers: c.ciphers,
    });
  }
  return out;
}
