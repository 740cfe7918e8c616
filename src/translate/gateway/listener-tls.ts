import type { TLSCertificate } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import type { GatewayListener, ReferenceGrant } from "../../sources/schema/gateway.ts";
import { gatewayGroup, ListenerReason } from "../../status/reasons.ts";
import { arrayOf } from "../common/objects.ts";
import { referenceAllowed } from "../common/reference-grants.ts";
import { readTLSSecret } from "../common/tls-secret.ts";

export interface CertificateResolution {
  /** The certificates that resolved, in certificateRefs order. */
  readonly certificates: TLSCertificate[];
  /** The first failure, for the listener's ResolvedRefs condition. */
  readonly failure?: { readonly reason: string; readonly message: string };
}

/**
 * Resolve an HTTPS listener's `tls.certificateRefs` to PEMs. Each ref must be a core Secret (group ""
 * and kind Secret, the defaults), be allowed (same namespace, or a ReferenceGrant in the Secret's
 * namespace from this Gateway's namespace: RefNotPermitted otherwise, checked before existence), exist,
 * and hold a parsable `tls.crt` certificate and a `tls.key` private key that matches it, valid at `nowMs`
 * when given (InvalidCertificateRef otherwise; tls-secret.ts). Without `nowMs` no clock is read.
 * `hostnames` of each certificate is the listener hostname (SNI picks the listener), or none.
 */
export function resolveCertificates(
  listener: GatewayListener,
  gatewayNamespace: string,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  nowMs?: number,
  /** The kind the listener belongs to, as a ReferenceGrant names it in `from`. */
  fromKind: "Gateway" | "ListenerSet" = "Gateway",
): CertificateResolution {
  const refs = arrayOf(listener.tls?.certificateRefs);
  const certificates: TLSCertificate[] = [];
  let failure: CertificateResolution["failure"];
  const fail = (reason: string, message: string) => {
    failure ??= { reason, message };
  };
  if (refs.length === 0)
    fail(
      ListenerReason.InvalidCertificateRef,
      `tls.certificateRefs: ${listener.protocol === "HTTPS" ? "an HTTPS listener" : "a TLS listener in mode Terminate"} needs a certificate`,
    );
  for (const [i, ref] of refs.entries()) {
    const field = `tls.certificateRefs[${i}]`;
    const group = ref.group ?? "";
    const kind = ref.kind ?? "Secret";
    const namespace = ref.namespace ?? gatewayNamespace;
    if (group !== "" || kind !== "Secret") {
      fail(
        ListenerReason.InvalidCertificateRef,
        `${field}: ${group ? `${group}/` : ""}${kind} is not supported; only core Secrets are`,
      );
      continue;
    }
    const from = { group: gatewayGroup, kind: fromKind, namespace: gatewayNamespace };
    if (!referenceAllowed(grants, from, { group: "", kind: "Secret", namespace }, ref.name)) {
      fail(
        ListenerReason.RefNotPermitted,
        `${field}: Secret ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows ${fromKind}s from ${gatewayNamespace}`,
      );
      continue;
    }
    const secret = secrets.get(`${namespace}/${ref.name}`);
    if (!secret) {
      fail(ListenerReason.InvalidCertificateRef, `${field}: Secret ${namespace}/${ref.name} not found`);
      continue;
    }
    const pems = readTLSSecret(secret, nowMs);
    if (typeof pems === "string") {
      fail(ListenerReason.InvalidCertificateRef, `${field}: Secret ${namespace}/${ref.name} ${pems}`);
      continue;
    }
    certificates.push({
      source: { kind: "Secret", namespace, name: ref.name },
      hostnames: listener.hostname ? [listener.hostname] : [],
      certPem: pems.certPem,
      keyPem: pems.keyPem,
    });
  }
  return failure ? { certificates, failure } : { certificates };
}
