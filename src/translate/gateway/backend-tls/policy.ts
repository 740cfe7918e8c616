/**
 * One BackendTLSPolicy's `spec` read alone (Gateway API v1.6.1, BackendTLSPolicyValidation), before it
 * is applied to any backend (apply.ts): the TLS settings it asks for, or why it cannot be honoured, as its
 * ancestors' Accepted and ResolvedRefs conditions.
 * - `validation.hostname` (required, a precise DNS name): the SNI and, without `subjectAltNames`, the name
 *   the backend's certificate must carry.
 * - `caCertificateRefs` (core ConfigMaps in the policy's namespace, key `ca.crt`) or
 *   `wellKnownCACertificates: System` (the runtime's bundled roots), exactly one of them. A reference of
 *   another group or kind: ResolvedRefs False `InvalidKind`; missing, unreadable, without `ca.crt`, or a
 *   `ca.crt` that is not PEM certificates: `InvalidCACertificateRef` (the message names each). The good
 *   ones are joined into one bundle; when none is good, Accepted False `NoValidCACertificate`.
 * - `subjectAltNames` (Hostname or URI): the names the certificate must carry instead of `hostname`.
 * - `options`: none is supported; any key makes the policy Invalid (an option is a requirement, such as a
 *   minimum TLS version, and a requirement that is not enforced must not pass for one).
 * Whatever is wrong, the policy still applies where it wins: its backends answer 503 (never cleartext).
 */
import type { BackendSubjectAltName, BackendTLS } from "../../../model/index.ts";
import type { BackendTLSPolicy } from "../../../sources/schema/backend-tls-policy.ts";
import type { ConfigMap } from "../../../sources/schema/core.ts";
import { refusedBySchemaAnnotation } from "../../../sources/schema/groups.ts";
import type { UnreadableObject } from "../../../sources/snapshot.ts";
import { BackendTLSPolicyReason as R } from "../../../status/reasons.ts";
import { caBundleProblem } from "../../common/ca-bundle.ts";
import { arrayOf, namespaceOf } from "../../common/objects.ts";

/** A condition outcome, as in listeners.ts. */
export type PolicyOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly message: string };

/** What one policy comes to. */
export interface PolicyReading {
  /** The TLS it asks for (without the Gateway's client certificate); absent: it cannot be honoured. */
  readonly tls?: Omit<BackendTLS, "clientCertificate" | "source">;
  readonly accepted: PolicyOutcome;
  readonly resolvedRefs: PolicyOutcome;
}

/** What CA references resolve against: ConfigMaps by `namespace/name`, and what could not be read. */
export interface CAConfigMaps {
  readonly configMaps: ReadonlyMap<string, ConfigMap>;
  readonly unreadable: readonly UnreadableObject[];
}

const preciseHostname = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const wildcardHostname = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const absoluteURI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;

export function readBackendTLSPolicy(policy: BackendTLSPolicy, sources: CAConfigMaps): PolicyReading {
  // A stand-in for a policy the schema refused (sources/schema/backend-tls-policy.ts): Invalid, saying why.
  const refused = policy.metadata.annotations?.[refusedBySchemaAnnotation];
  if (refused !== undefined) {
    const message = `the policy was refused by the schema (${refused})`;
    return { accepted: { ok: false, reason: R.Invalid, message }, resolvedRefs: { ok: true } };
  }
  const v = policy.spec?.validation ?? {};
  const invalid: string[] = [];
  const hostname = v.hostname ?? "";
  if (hostname === "") invalid.push("spec.validation.hostname is required");
  else if (hostname.length > 253 || !preciseHostname.test(hostname))
    invalid.push(`spec.validation.hostname "${hostname}" is not a precise DNS name`);
  const refs = arrayOf(v.caCertificateRefs);
  const wellKnown = v.wellKnownCACertificates ?? "";
  if (refs.length > 0 && wellKnown !== "")
    invalid.push("spec.validation: only one of caCertificateRefs and wellKnownCACertificates may be set");
  else if (refs.length === 0 && wellKnown === "")
    invalid.push("spec.validation: one of caCertificateRefs and wellKnownCACertificates must be set");
  else if (wellKnown !== "" && wellKnown !== "System")
    invalid.push(`spec.validation.wellKnownCACertificates "${wellKnown}" is not supported; only System is`);
  const sans = subjectAltNames(v.subjectAltNames, invalid);
  const options = Object.keys(policy.spec?.options ?? {});
  if (options.length > 0)
    invalid.push(`spec.options ${options.map((k) => `"${k}"`).join(", ")}: no option is supported`);
  const cas = resolveCAs(policy, refs, sources);
  const resolvedRefs: PolicyOutcome =
    cas.failures.length === 0
      ? { ok: true }
      : {
          ok: false,
          reason: cas.failures[0]?.reason ?? R.InvalidCACertificateRef,
          message: cas.failures.map((f) => f.message).join("; "),
        };
  let accepted: PolicyOutcome = { ok: true };
  if (invalid.length > 0) accepted = { ok: false, reason: R.Invalid, message: invalid.join("; ") };
  else if (refs.length > 0 && cas.pems.length === 0)
    accepted = {
      ok: false,
      reason: R.NoValidCACertificate,
      message: `no CA certificate could be resolved (${resolvedRefs.ok ? "" : resolvedRefs.message})`,
    };
  if (!accepted.ok) return { accepted, resolvedRefs };
  const tls = {
    serverName: hostname,
    ...(cas.pems.length > 0 ? { caPem: cas.pems.join("\n") } : {}),
    ...(sans.length > 0 ? { subjectAltNames: sans } : {}),
  };
  return { tls, accepted, resolvedRefs };
}

/** `validation.subjectAltNames` as the model's; what is wrong goes to `invalid`. */
function subjectAltNames(
  list: NonNullable<BackendTLSPolicy["spec"]["validation"]>["subjectAltNames"],
  invalid: string[],
) {
  const out: BackendSubjectAltName[] = [];
  for (const [i, san] of arrayOf(list).entries()) {
    const field = `spec.validation.subjectAltNames[${i}]`;
    if (san?.type === "Hostname") {
      const h = san.hostname ?? "";
      if (h.length > 0 && h.length <= 253 && wildcardHostname.test(h))
        out.push({ type: "Hostname", value: h });
      else invalid.push(`${field}.hostname "${h}" is not a DNS name`);
    } else if (san?.type === "URI") {
      const u = san.uri ?? "";
      if (absoluteURI.test(u)) out.push({ type: "URI", value: u });
      else invalid.push(`${field}.uri "${u}" is not an absolute URI`);
    } else invalid.push(`${field}.type "${String(san?.type)}" is not Hostname or URI`);
  }
  return out;
}

/** Each `caCertificateRefs` entry: the PEM bundles of the good ones, the failures of the others. */
function resolveCAs(
  policy: BackendTLSPolicy,
  refs: readonly { group?: string; kind?: string; name?: string }[],
  sources: CAConfigMaps,
): { pems: string[]; failures: { reason: string; message: string }[] } {
  const namespace = namespaceOf(policy);
  const pems: string[] = [];
  const failures: { reason: string; message: string }[] = [];
  for (const [i, ref] of refs.entries()) {
    const field = `spec.validation.caCertificateRefs[${i}]`;
    const group = ref?.group ?? "";
    const kind = ref?.kind ?? "";
    const name = ref?.name ?? "";
    const bad = (message: string) => failures.push({ reason: R.InvalidCACertificateRef, message });
    if (group !== "" || kind !== "ConfigMap") {
      const what = `${group ? `${group}/` : ""}${kind || "(no kind)"}`;
      failures.push({
        reason: R.InvalidKind,
        message: `${field}: ${what} is not supported; only core ConfigMaps are`,
      });
      continue;
    }
    const what = `ConfigMap ${namespace}/${name}`;
    const unread = sources.unreadable.find(
      (u) => u.kind === "ConfigMap" && u.namespace === namespace && u.name === name,
    );
    if (unread) {
      bad(`${field}: ${what} could not be read: ${unread.why}`);
      continue;
    }
    const cm = sources.configMaps.get(`${namespace}/${name}`);
    const pem = cm?.data?.["ca.crt"] ?? undefined;
    if (!cm) bad(`${field}: ${what} not found`);
    else if (pem === undefined) bad(`${field}: ${what} has no ca.crt`);
    else {
      const problem = caBundleProblem(pem);
      if (problem === undefined) pems.push(pem);
      else bad(`${field}: ${what}: ca.crt ${problem}`);
    }
  }
  return { pems, failures };
}
