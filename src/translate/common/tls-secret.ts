import type * as Crypto from "node:crypto";
import type { Secret } from "../../sources/schema/core.ts";
import { secretText } from "./objects.ts";

/** A usable certificate and key read from a `kubernetes.io/tls` Secret. */
export interface TLSSecretPems {
  readonly certPem: string;
  readonly keyPem: string;
  /** DNS names of the leaf certificate's subjectAltName, lower-case, in certificate order. */
  readonly dnsNames: readonly string[];
}

/**
 * Read and check the certificate of a TLS Secret. Returns the PEMs, or a message that completes
 * "Secret ns/name …" when the Secret cannot be served: wrong type, a field missing, a certificate or key
 * that does not parse, a key that does not belong to the certificate, or (only when `nowMs` is given,
 * so translation stays a function of its inputs) a certificate outside its validity period. The checks
 * run here, not at handshake time, so one bad Secret costs its listener or host and never a server.
 */
export function readTLSSecret(secret: Secret, nowMs?: number): TLSSecretPems | string {
  if (secret.type !== undefined && secret.type !== "kubernetes.io/tls")
    return `has type "${secret.type}", not kubernetes.io/tls`;
  const certPem = secretText(secret, "tls.crt");
  const keyPem = secretText(secret, "tls.key");
  if (!certPem || !keyPem) return "needs both tls.crt and tls.key";
  // Loaded at the first Secret: node:crypto (and the streams it loads) is a tenth of the start of a
  // `gatehouse translate` that reads none.
  const { createPrivateKey, X509Certificate } = require("node:crypto") as typeof Crypto;
  let cert: Crypto.X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return "has a tls.crt that is not a PEM certificate";
  }
  try {
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return "has a tls.key that does not match tls.crt";
  } catch {
    return "has a tls.key that is not a PEM private key";
  }
  if (nowMs !== undefined) {
    if (Date.parse(cert.validTo) < nowMs) return `has a certificate that expired on ${iso(cert.validTo)}`;
    if (Date.parse(cert.validFrom) > nowMs)
      return `has a certificate not valid before ${iso(cert.validFrom)}`;
  }
  return { certPem, keyPem, dnsNames: dnsNamesOf(cert) };
}

/** `DNS:a.com, DNS:*.b.com, IP Address:…` → `["a.com", "*.b.com"]`. */
function dnsNamesOf(cert: Crypto.X509Certificate): string[] {
  return (cert.subjectAltName ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4).toLowerCase());
}

function iso(date: string): string {
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? date : new Date(ms).toISOString();
}

/**
 * Whether a certificate with these DNS names is valid for `host` (RFC 6125: a leading `*` covers one
 * label). A host pattern `*.foo.com` is covered by the same wildcard only.
 */
export function namesCover(dnsNames: readonly string[], host: string): boolean {
  const h = host.toLowerCase();
  return dnsNames.some((n) => {
    if (n === h) return true;
    if (!n.startsWith("*.") || h.startsWith("*.")) return false;
    const dot = h.indexOf(".");
    return dot > 0 && h.slice(dot) === n.slice(1);
  });
}
