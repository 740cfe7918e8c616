import type { Secret } from "../../sources/schema/core.ts";
import type { Gateway, ReferenceGrant } from "../../sources/schema/gateway.ts";
import { GatewayReason, gatewayGroup } from "../../status/reasons.ts";
import { namespaceOf } from "../common/objects.ts";
import { referenceAllowed } from "../common/reference-grants.ts";
import { readTLSSecret } from "../common/tls-secret.ts";

/** A condition outcome, as `Outcome` in listeners.ts. */
type Outcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly message: string };

/**
 * A Gateway's `spec.tls.backend` (GatewayTLSConfig, v1.6.1): Gatehouse never opens TLS connections to
 * backends, so the client certificate it names is judged and reported unused. (`spec.tls.frontend`, client
 * certificates asked of clients, is frontend-validation.ts.)
 */

/**
 * Gateway `ResolvedRefs` for `spec.tls.backend.clientCertificateRef`, undefined when it is not set. The
 * reference is judged as the spec says (RefNotPermitted for a cross-namespace Secret no ReferenceGrant
 * allows; InvalidClientCertificateRef for another kind, a missing Secret or one without a usable
 * `tls.crt`/`tls.key`), and even a good one is False with InvalidClientCertificateRef: Gatehouse opens no
 * TLS connection to a backend, so the certificate would never be presented. The condition does not touch
 * Accepted or Programmed (spec: it "does not directly impact" them).
 */
export function backendClientCertificate(
  gateway: Gateway,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  nowMs?: number,
): Outcome | undefined {
  const ref = gateway.spec?.tls?.backend?.clientCertificateRef;
  if (!ref) return undefined;
  const field = "spec.tls.backend.clientCertificateRef";
  const unused = "Gatehouse does not open TLS connections to backends, so no client certificate is presented";
  const invalid = (why: string): Outcome => ({
    ok: false,
    reason: GatewayReason.InvalidClientCertificateRef,
    message: `${field}: ${why}; besides, ${unused}`,
  });
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Secret";
  const gwNamespace = namespaceOf(gateway);
  const namespace = ref.namespace ?? gwNamespace;
  if (group !== "" || kind !== "Secret")
    return invalid(`${group ? `${group}/` : ""}${kind} is not supported; only core Secrets are`);
  const from = { group: gatewayGroup, kind: "Gateway", namespace: gwNamespace };
  if (!referenceAllowed(grants, from, { group: "", kind: "Secret", namespace }, ref.name))
    return {
      ok: false,
      reason: GatewayReason.RefNotPermitted,
      message: `${field}: Secret ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows Gateways from ${gwNamespace}; besides, ${unused}`,
    };
  const secret = secrets.get(`${namespace}/${ref.name}`);
  if (!secret) return invalid(`Secret ${namespace}/${ref.name} not found`);
  const pems = readTLSSecret(secret, nowMs);
  if (typeof pems === "string") return invalid(`Secret ${namespace}/${ref.name} ${pems}`);
  return {
    ok: false,
    reason: GatewayReason.InvalidClientCertificateRef,
    message: `${field}: Secret ${namespace}/${ref.name} is valid but not used: ${unused}`,
  };
}
