/**
 * TLS settings of HTTPS listeners (docs/tls.md): the SNI table handed to `Bun.serve`, the protocol and
 * cipher policy, and the self-signed default certificate generated at start.
 *
 * Measured on Bun 1.4 (BoringSSL): `Bun.serve` already refuses TLS 1.0 and 1.1 (alert 70, checked with
 * `openssl s_client -tls1_1 -cipher DEFAULT@SECLEVEL=0`); we still say so explicitly with
 * `secureOptions`, so a Bun default change cannot silently reopen them. `ciphers` restricts TLS 1.2 to
 * ECDHE with AEAD (a CBC suite is refused with a handshake failure), unless a certificate carries its own
 * list (ingress-nginx `ssl-ciphers`, floored at translation: annotations/ssl-ciphers.ts); TLS 1.3 suites
 * are fixed by BoringSSL and all modern. SNI entries may be `*.example.com` (one label, as RFC 6125).
 */

import { constants } from "node:crypto";
import { readFileSync } from "node:fs";
import type { TLSOptions } from "bun";
import type { ClientCertificateValidation, TLSCertificate } from "../../model/index.ts";
import { selfSignedCertificate } from "./self-signed.ts";

/** Mozilla "intermediate" TLS 1.2 suites: forward secrecy and AEAD only. */
export const modernCiphers = [
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
].join(":");

/** Options every SNI entry carries: no SSLv3, TLS 1.0 or 1.1; modern TLS 1.2 ciphers. */
export const tlsProtocolOptions: Pick<TLSOptions, "secureOptions" | "ciphers"> = {
  secureOptions: constants.SSL_OP_NO_SSLv3 | constants.SSL_OP_NO_TLSv1 | constants.SSL_OP_NO_TLSv1_1,
  ciphers: modernCiphers,
};

/** The protocol options of one certificate's SNI entry: its own cipher list when it has one. */
function protocolOptionsOf(c: TLSCertificate): Pick<TLSOptions, "secureOptions" | "ciphers"> {
  return c.ciphers === undefined ? tlsProtocolOptions : { ...tlsProtocolOptions, ciphers: c.ciphers };
}

/**
 * What every SNI entry of a listener with client validation carries (Gateway `spec.tls.frontend`): the CA
 * bundle, a certificate asked for, and (AllowValidOnly) the handshake failed without a good one. Measured
 * on Bun 1.4: `Bun.serve` honours all three per entry (no certificate: alert 116, certificate_required;
 * another CA's: the handshake fails; AllowInsecureFallback serves both).
 */
function clientOptions(v: ClientCertificateValidation | undefined): TLSOptions {
  if (v === undefined) return {};
  return { ca: v.caPem, requestCert: true, rejectUnauthorized: v.mode === "AllowValidOnly" };
}

/**
 * The `tls` array of `Bun.serve`: the first certificate is the fallback (no server name: clients without
 * SNI or with a name no entry has), then one entry per name. Merged listeners may bring one name twice
 * (one Secret on several listeners): the first wins. Throws on an empty list (a listener without
 * certificates is never opened).
 */
export function sniEntries(
  name: string,
  certs: readonly TLSCertificate[],
  validation?: ClientCertificateValidation,
): TLSOptions[] {
  const first = certs[0];
  if (first === undefined) throw new Error(`listener ${name}: HTTPS without certificates`);
  const client = clientOptions(validation);
  const entries: TLSOptions[] = [
    { ...protocolOptionsOf(first), ...client, cert: first.certPem, key: first.keyPem },
  ];
  const named = new Set<string>();
  for (const c of certs) {
    for (const host of c.hostnames) {
      if (named.has(host)) continue;
      named.add(host);
      entries.push({ ...protocolOptionsOf(c), ...client, cert: c.certPem, key: c.keyPem, serverName: host });
    }
  }
  return entries;
}

export interface GeneratedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

let generated: GeneratedCertificate | undefined;

/**
 * A self-signed certificate (P-256, CN and SAN `name`, valid ten years) made once per process, in process
 * (self-signed.ts: no openssl binary needed), the default certificate when `--default-certificate` names
 * none (ingress-nginx's "fake certificate"). Undefined if making it fails: the caller logs it and serves
 * without one.
 */
export function generatedDefaultCertificate(name = "gatehouse.invalid"): GeneratedCertificate | undefined {
  if (generated !== undefined) return generated;
  try {
    generated = selfSignedCertificate(name, 3650);
    return generated;
  } catch {
    return undefined;
  }
}

/**
 * Whether Linux hands connections queued on a closing listener to another listener of its reuseport
 * group (`net.ipv4.tcp_migrate_req`, kernel 5.14+). Rotation starts a new server beside the old one and
 * closes the old: without migration, connections the old socket had queued but not yet accepted are reset
 * (measured: about 2% of new connections arriving during a swap; none with migration on). Undefined when
 * the setting cannot be read (not Linux, old kernel).
 */
export function listenerMigrationEnabled(): boolean | undefined {
  try {
    return readFileSync("/proc/sys/net/ipv4/tcp_migrate_req", "utf8").trim() === "1";
  } catch {
    return undefined;
  }
}
