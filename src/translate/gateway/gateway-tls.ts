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

/** What a Gateway's `spec.tls.backend.clientCertificateRef` comes to. */
export interface BackendClientCertificate {
  /** The Gateway's ResolvedRefs. */
  readonly outcome: Outcome;
  /** The certificate presented to TLS backends (backend-tls/); absent when the reference is bad. */
  readonly certificate?: { readonly certPem: string; readonly keyPem: string };
}

/** What the message of a bad reference adds: what it does to the Gateway's traffic (backend-tls/apply.ts). */
const failsClosed =
  "TLS connections from this Gateway's routes to backends fail (503) until it is fixed; cleartext backends are not affected";

/**
 * Gateway `ResolvedRefs` for `spec.tls.backend.clientCertificateRef` (GatewayBackendTLS, v1.6.1) and the
 * certificate, undefined when it is not set. The reference is judged as the spec says: RefNotPermitted for
 * a cross-namespace Secret no ReferenceGrant allows; InvalidClientCertificateRef for another group or kind,
 * a missing Secret, or one without a usable `tls.crt`/`tls.key` (readTLSSecret: type kubernetes.io/tls, a
 * matching key, within its validity period). A good one is presented on every TLS connection from the
 * Gateway's routes to a backend (those a BackendTLSPolicy puts under TLS); a bad one makes those
 * connections fail rather than go without it. The condition does not touch Accepted or Programmed
 * (spec: it "does not directly impact" them). (`spec.tls.frontend`, client certificates asked of
 * clients, is frontend-validation.ts.)
 */
export function backendClientCertificate(
  gateway: Gateway,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  nowMs?: number,
): BackendClientCertificate | undefined {
  const ref = gateway.spec?.tls?.backend?.clientCertificateRef;
  if (!ref) return undefined;
  const field = "spec.tls.backend.clientCertificateRef";
  const refused = (reason: string, why: string): BackendClientCertificate => ({
    outcome: { ok: false, reason, message: `${field}: ${why}; ${failsClosed}` },
  });
  const invalid = (why: string) => refused(GatewayReason.InvalidClientCertificateRef, why);
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Secret";
  const gwNamespace = namespaceOf(gateway);
  const namespace = ref.namespace ?? gwNamespace;
  if (group !== "" || kind !== "Secret")
    return invalid(`${group ? `${group}/` : ""}${kind} is not supported; only core Secrets are`);
  const from = { group: gatewayGroup, kind: "Gateway", namespace: gwNamespace };
  if (!referenceAllowed(grants, from, { group: "", kind: "Secret", namespace }, ref.name))
    return refused(
      GatewayReason.RefNotPermitted,
      `Secret ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows Gateways from ${gwNamespace}`,
    );
  const secret = secrets.get(`${namespace}/${ref.name}`);
  if (!secret) return invalid(`Secret ${namespace}/${ref.name} not found`);
  const pems = readTLSSecret(secret, nowMs);
  if (typeof pems === "string") return invalid(`Secret ${namespace}/${ref.name} ${pems}`);
  return { outcome: { ok: true }, certificate: { certPem: pems.certPem, keyPem: pems.keyPem } };
}
