/** CA bundles read from ConfigMaps and Secrets (Gateway `spec.tls.frontend`, ingress-nginx `auth-tls-secret`). */
import type * as Crypto from "node:crypto";

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * Why a `ca.crt` cannot be a trust anchor, or undefined: it must hold at least one PEM certificate and
 * every one of them must parse (a bundle OpenSSL half-reads would trust less than its owner thinks).
 */
export function caBundleProblem(pem: string): string | undefined {
  const blocks = pem.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) return "holds no PEM certificate";
  const { X509Certificate } = require("node:crypto") as typeof Crypto;
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      return `certificate ${i + 1} does not parse`;
    }
  }
  return undefined;
}
