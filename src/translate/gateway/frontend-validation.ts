/**
 * Gateway `spec.tls.frontend` (FrontendTLSConfig, Gateway API v1.6.1): the client-certificate validation
 * of the HTTPS listeners on each port, `perPort[port]` replacing `default`. Each `caCertificateRefs` entry
 * is judged as the spec says:
 * - a kind other than core ConfigMap or Secret: ResolvedRefs False `InvalidCACertificateKind`;
 * - another namespace without a ReferenceGrant there: `RefNotPermitted`;
 * - missing, unreadable, without a `ca.crt` key, or a `ca.crt` that is not PEM certificates:
 *   `InvalidCACertificateRef` (the message names the reference and why).
 * The CAs of the good ones are joined into one bundle. When none is good the listener is Accepted False
 * `NoValidCACertificate` and not served: a listener that must check client certificates never serves
 * without the check (never open). ConfigMaps are the spec's core kind; Secrets (key `ca.crt`, any type)
 * are accepted too, as Envoy Gateway does.
 */
import type { ClientCertificateValidation } from "../../model/index.ts";
import type { ConfigMap, Secret } from "../../sources/schema/core.ts";
import type { Gateway, ReferenceGrant } from "../../sources/schema/gateway.ts";
import type { UnreadableObject } from "../../sources/snapshot.ts";
import { gatewayGroup, ListenerReason } from "../../status/reasons.ts";
import { caBundleProblem } from "../common/ca-bundle.ts";
import { arrayOf, namespaceOf, secretText } from "../common/objects.ts";
import { referenceAllowed } from "../common/reference-grants.ts";

/** What the validation of one port comes to; undefined from `frontendValidation`: none applies. */
export interface FrontendValidation {
  /** The CA bundle of the references that resolved and the mode; absent when none did. */
  readonly validation?: ClientCertificateValidation;
  /** The first bad reference, for the listener's ResolvedRefs (or why the mode is refused). */
  readonly failure?: { readonly reason: string; readonly message: string };
  /** Why the listener cannot be accepted (no valid CA, or a mode that is not supported). */
  readonly refusal?: { readonly reason: string; readonly message: string };
}

/** What references resolve against: Secrets and ConfigMaps by `namespace/name`, and what could not be read. */
export interface CASources {
  readonly secrets: ReadonlyMap<string, Secret>;
  readonly configMaps: ReadonlyMap<string, ConfigMap>;
  readonly unreadable: readonly UnreadableObject[];
  readonly grants: readonly ReferenceGrant[];
}

const modes = new Set<string>(["AllowValidOnly", "AllowInsecureFallback"]);

/** The `spec.tls.frontend` entry that applies to `port` and the field path it is at; undefined: none. */
function configFor(gateway: Gateway, port: number): { field: string; validation: unknown } | undefined {
  const frontend = gateway.spec?.tls?.frontend;
  if (!frontend) return undefined;
  const perPort = arrayOf(frontend.perPort);
  const i = perPort.findIndex((p) => p?.port === port);
  const [field, config] =
    i >= 0
      ? [`spec.tls.frontend.perPort[${i}].tls.validation`, perPort[i]?.tls]
      : ["spec.tls.frontend.default.validation", frontend.default];
  const validation = config?.validation;
  return validation === undefined || validation === null ? undefined : { field, validation };
}

/** The client-certificate validation of the HTTPS listeners on `port`; undefined: none is asked for. */
export function frontendValidation(
  gateway: Gateway,
  port: number,
  sources: CASources,
): FrontendValidation | undefined {
  const config = configFor(gateway, port);
  if (config === undefined) return undefined;
  const { field } = config;
  const v = (typeof config.validation === "object" ? config.validation : {}) as {
    caCertificateRefs?: unknown;
    mode?: unknown;
  };
  const mode = v.mode ?? "AllowValidOnly";
  if (typeof mode !== "string" || !modes.has(mode)) {
    const message = `${field}.mode ${JSON.stringify(mode)} is not AllowValidOnly or AllowInsecureFallback`;
    return { refusal: { reason: ListenerReason.UnsupportedValue, message } };
  }
  const refs = Array.isArray(v.caCertificateRefs) ? (v.caCertificateRefs as unknown[]) : [];
  const pems: string[] = [];
  let failure: FrontendValidation["failure"];
  for (const [i, ref] of refs.entries()) {
    const got = resolveCA(gateway, ref, `${field}.caCertificateRefs[${i}]`, sources);
    if (typeof got === "string") pems.push(got);
    else failure ??= got;
  }
  if (pems.length === 0) {
    const why = failure?.message ?? `${field}.caCertificateRefs is empty`;
    return {
      failure: failure ?? { reason: ListenerReason.InvalidCACertificateRef, message: why },
      refusal: {
        reason: ListenerReason.NoValidCACertificate,
        message: `no CA certificate for client validation could be resolved (${why}); the listener is not served rather than served without it`,
      },
    };
  }
  const validation: ClientCertificateValidation = {
    caPem: pems.join("\n"),
    mode: mode as ClientCertificateValidation["mode"],
  };
  return failure ? { validation, failure } : { validation };
}

/** Whether any entry of `spec.tls.frontend` (default or per port) asks for AllowInsecureFallback. */
export function insecureFallbackFields(gateway: Gateway): string[] {
  const frontend = gateway.spec?.tls?.frontend;
  if (!frontend) return [];
  const modeOf = (c: { validation?: unknown } | undefined) =>
    (c?.validation as { mode?: unknown } | null | undefined)?.mode;
  const out: string[] = [];
  if (modeOf(frontend.default) === "AllowInsecureFallback") out.push("default");
  for (const p of arrayOf(frontend.perPort))
    if (modeOf(p?.tls) === "AllowInsecureFallback") out.push(`perPort ${p.port}`);
  return out;
}

/** One reference: the PEM bundle, or the failure for ResolvedRefs. */
function resolveCA(
  gateway: Gateway,
  raw: unknown,
  field: string,
  sources: CASources,
): string | { reason: string; message: string } {
  const ref = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const group = typeof ref.group === "string" ? ref.group : "";
  const kind = typeof ref.kind === "string" ? ref.kind : "";
  const name = typeof ref.name === "string" ? ref.name : "";
  const gwNamespace = namespaceOf(gateway);
  const namespace = typeof ref.namespace === "string" && ref.namespace ? ref.namespace : gwNamespace;
  const invalid = (message: string) => ({ reason: ListenerReason.InvalidCACertificateRef, message });
  if (group !== "" || (kind !== "ConfigMap" && kind !== "Secret"))
    return {
      reason: ListenerReason.InvalidCACertificateKind,
      message: `${field}: ${group ? `${group}/` : ""}${kind || "(no kind)"} is not supported; use a core ConfigMap or Secret`,
    };
  const what = `${kind} ${namespace}/${name}`;
  const from = { group: gatewayGroup, kind: "Gateway", namespace: gwNamespace };
  if (!referenceAllowed(sources.grants, from, { group: "", kind, namespace }, name))
    return {
      reason: ListenerReason.RefNotPermitted,
      message: `${field}: ${what} is in another namespace and no ReferenceGrant there allows Gateways from ${gwNamespace}`,
    };
  const unread = sources.unreadable.find(
    (u) => u.kind === kind && u.namespace === namespace && u.name === name,
  );
  if (unread) return invalid(`${field}: ${what} could not be read: ${unread.why}`);
  const key = `${namespace}/${name}`;
  const object = kind === "ConfigMap" ? sources.configMaps.get(key) : sources.secrets.get(key);
  if (!object) return invalid(`${field}: ${what} not found`);
  const pem = caCertificateOf(object);
  if (pem === undefined) return invalid(`${field}: ${what} has no ca.crt`);
  const bad = caBundleProblem(pem);
  return bad === undefined ? pem : invalid(`${field}: ${what}: ca.crt ${bad}`);
}

/** The `ca.crt` entry of a ConfigMap or Secret (Secret `data` is base64). */
function caCertificateOf(object: ConfigMap | Secret): string | undefined {
  if (object.kind === "ConfigMap") return object.data?.["ca.crt"] ?? undefined;
  return secretText(object, "ca.crt");
}
