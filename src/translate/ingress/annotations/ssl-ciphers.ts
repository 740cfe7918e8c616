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
 * aliases, `@STRENGTH`) and then by BoringSSL itself, with CIPHER_FLOOR appended (a list may allow CBC or
 * static-RSA suites for old clients, as in ingress-nginx, never NULL, anonymous, 3DES, RC4 or MD5 ones): a
 * list that leaves nothing (or names TLS 1.3 suites, or OpenSSL's `@SECLEVEL`, which BoringSSL lacks) is
 * an `InvalidAnnotation` and the hosts keep Gatehouse's list; a name the list adds that matches no suite
 * is reported (BoringSSL skips it silently), the rest of the list applies.
 */
import type * as Tls from "node:tls";
import type { Problem, TLSCertificate } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { parseIngressHost } from "../../common/host-patterns.ts";
import { annotationOf, arrayOf, sourceRef } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { namesCover } from "../../common/tls-secret.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

const ANNOTATION = `${NGINX_PREFIX}ssl-ciphers`;
/** One element of an OpenSSL cipher list: a name or `+`-joined aliases, optionally prefixed. */
const ELEMENT = /^[!+-]?[A-Za-z0-9_-]+(?:\+[A-Za-z0-9_-]+)*$/;
/**
 * Appended to every list: suites no list may bring back (`!` deletes for good), whatever ingress-nginx
 * would allow: no authentication, no encryption, 64-bit blocks (Sweet32), RC4, MD5.
 */
export const CIPHER_FLOOR = "!aNULL:!eNULL:!3DES:!RC4:!MD5";

interface CipherCheck {
  /** The list served: the value with the floor appended. */
  readonly effective?: string;
  /** Why the value is refused as a whole. */
  readonly refused?: string;
  /** Names the value adds that match no suite (left out by BoringSSL). */
  readonly unmatched: readonly string[];
}

/** Checked once per value: a translation runs for every change, and each check builds TLS contexts. */
const checked = new Map<string, CipherCheck>();

function checkCipherList(list: string): CipherCheck {
  let hit = checked.get(list);
  if (hit === undefined) {
    hit = check(list);
    if (checked.size >= 256) checked.clear();
    checked.set(list, hit);
  }
  return hit;
}

function check(list: string): CipherCheck {
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
  // node:tls would take these as TLS 1.3 suites and Bun.serve refuses a list of them: say so here.
  const tls13 = elements.find((e) => /^[!+-]?TLS_/i.test(e));
  if (tls13 !== undefined)
    return {
      refused: `"${tls13}" is a TLS 1.3 suite; those are fixed by BoringSSL, and this list chooses TLS 1.2 suites`,
      unmatched: [],
    };
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
  const effective = `${elements.join(":")}:${CIPHER_FLOOR}`;
  if (!takes(effective))
    return {
      refused: `matches no TLS 1.2 cipher suite BoringSSL offers that Gatehouse allows (never ${CIPHER_FLOOR.replaceAll("!", "").replaceAll(":", ", ")})`,
      unmatched: [],
    };
  // Only plain names add suites: a removal (`!`, `-`) or a move (`+`) of nothing changes nothing.
  const unmatched = elements.filter((e) => e !== "@STRENGTH" && !/^[!+-]/.test(e) && !takes(e));
  return { effective, unmatched };
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
    const { effective, refused, unmatched } = checkCipherList(value);
    if (refused !== undefined || effective === undefined) {
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
      if (taken === undefined) hostCiphers.set(host, { ciphers: effective, from: me });
      else if (taken.from !== me && taken.ciphers !== effective) {
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
    // The certificate the host is served today: a wildcard entry's that covers it, else the default.
    const covering = certificates.find((cert) => namesCover(cert.hostnames, host));
    if (covering !== undefined) {
      out.push({ ...covering, hostnames: [host], ciphers: c.ciphers });
      continue;
    }
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
