/**
 * The certificate table of an HTTP/2-capable HTTPS listener: one `SecureContext` per server name, looked
 * up by `SNICallback`. It mirrors `sniEntries()` for `Bun.serve` (tls.ts): the first certificate is the
 * fallback for clients without SNI or with a name no entry has; the first certificate to claim a name
 * wins; `*.example.com` covers exactly one label (RFC 6125), an exact name beats a wildcard. Each context
 * carries the same protocol and cipher policy as the Bun.serve listeners (a certificate's own cipher
 * list, from `ssl-ciphers`, replaces the default one in its context).
 */
import { createSecureContext, type SecureContext } from "node:tls";
import type { TLSCertificate } from "../../model/index.ts";
import { modernCiphers } from "../listeners/tls.ts";
import { normaliseServername } from "../match/servername.ts";

export interface SniTable {
  readonly fallback: SecureContext;
  readonly exact: ReadonlyMap<string, SecureContext>;
  /** `*.foo.com` keyed by `foo.com`. */
  readonly wildcard: ReadonlyMap<string, SecureContext>;
  /** The contexts carrying CAs of their own (a host's client certificates, checked per request). */
  readonly ownClientCA: ReadonlySet<SecureContext>;
}

/** TLS 1.2 and 1.3 only; TLS 1.2 restricted to ECDHE + AEAD (docs/tls.md). */
export const h2ProtocolOptions = { minVersion: "TLSv1.2", ciphers: modernCiphers } as const;

/** Context options beside the certificate every context of a table shares (the CAs that verify clients). */
export interface SharedContextOptions {
  readonly ca?: string;
}

/** Throws on an empty list or a PEM pair OpenSSL refuses (translation has already checked both). */
export function buildSniTable(
  name: string,
  certs: readonly TLSCertificate[],
  shared: SharedContextOptions = {},
): SniTable {
  const contextOf = (c: TLSCertificate): SecureContext =>
    createSecureContext({
      ...h2ProtocolOptions,
      ...shared,
      ...(c.ciphers === undefined ? {} : { ciphers: c.ciphers }),
      // A host's own client CAs (ingress-nginx auth-tls-secret): only its handshakes are verified by them.
      ...(c.clientCAPem === undefined ? {} : { ca: c.clientCAPem }),
      cert: c.certPem,
      key: c.keyPem,
    });
  const first = certs[0];
  if (first === undefined) throw new Error(`listener ${name}: HTTPS without certificates`);
  const contexts = new Map<TLSCertificate, SecureContext>();
  const ctx = (c: TLSCertificate): SecureContext => {
    let s = contexts.get(c);
    if (s === undefined) {
      s = contextOf(c);
      contexts.set(c, s);
    }
    return s;
  };
  const exact = new Map<string, SecureContext>();
  const wildcard = new Map<string, SecureContext>();
  for (const c of certs) {
    for (const raw of c.hostnames) {
      const host = raw.toLowerCase();
      const [map, key] = host.startsWith("*.") ? [wildcard, host.slice(2)] : [exact, host];
      if (!map.has(key)) map.set(key, ctx(c));
    }
  }
  const ownClientCA = new Set<SecureContext>();
  for (const [c, s] of contexts) if (c.clientCAPem !== undefined) ownClientCA.add(s);
  return { fallback: ctx(first), exact, wildcard, ownClientCA };
}

/** The context for a client's SNI name (absent or unknown: the fallback). */
export function contextFor(table: SniTable, servername: string | undefined): SecureContext {
  if (!servername) return table.fallback;
  // As routing normalises Host: `a.example.` must get a.example's context (and its client CAs).
  const name = normaliseServername(servername);
  const hit = table.exact.get(name);
  if (hit !== undefined) return hit;
  const dot = name.indexOf(".");
  return (dot > 0 ? table.wildcard.get(name.slice(dot + 1)) : undefined) ?? table.fallback;
}
