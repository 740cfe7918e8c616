import { authSecret, authTLSSecret, customHeadersConfigMap, proxySSLSecret } from "../nginx-references.ts";
import type { Gateway } from "../schema/gateway.ts";
import { type KnownKind, knownKinds, parseObject, refusedStandIn } from "../schema/index.ts";
import type { Ingress } from "../schema/networking.ts";
import { emptySnapshotFields, type ResourceSnapshot } from "../snapshot.ts";

/** An object the API returned that failed validation: reported and left out. */
export interface InvalidObject {
  readonly kind: string;
  /** `namespace/name`, or `name` for cluster-scoped kinds. */
  readonly name: string;
  readonly reason: string;
  /** The object as the API sent it: its spec says where a condition can go (parentRefs, targetRefs). */
  readonly object: unknown;
}

/** Validation results by `uid@resourceVersion`, so an unchanged object is not parsed again. */
export type ParseCache = Map<string, ReturnType<typeof parseObject>>;

/**
 * The snapshot from the raw objects of every kind. Each object is validated with the same schemas as the
 * folder source; invalid ones are returned in `invalid` (the caller logs them) and left out. Secrets are
 * taken only when `keepSecret` says a listener or Ingress references them. `cache` is pruned to what was
 * seen this time.
 */
export function assembleSnapshot(
  objects: Readonly<Record<KnownKind, readonly unknown[]>>,
  keepSecret: (namespace: string, name: string) => boolean,
  cache: ParseCache,
): { snapshot: ResourceSnapshot; invalid: InvalidObject[] } {
  const fields = emptySnapshotFields();
  const invalid: InvalidObject[] = [];
  const seen = new Set<string>();
  for (const kind of Object.keys(objects) as KnownKind[]) {
    for (const raw of objects[kind]) {
      const meta = ((raw as { metadata?: Record<string, unknown> }).metadata ?? {}) as Record<string, string>;
      if (kind === "Secret" && !keepSecret(meta.namespace ?? "", meta.name ?? "")) continue;
      // A Secret or ConfigMap cached without its data and later fetched whole share a resourceVersion:
      // keep them apart.
      const data = (kind === "Secret" || kind === "ConfigMap") && "data" in (raw as object) ? "+data" : "";
      const key = `${kind}/${meta.namespace ?? ""}/${meta.name}/${meta.uid ?? ""}@${meta.resourceVersion ?? ""}${data}`;
      seen.add(key);
      let parsed = cache.get(key);
      if (!parsed) {
        parsed = parseObject(raw);
        cache.set(key, parsed);
      }
      if (parsed.ok) fields[knownKinds[parsed.kind].field].push(parsed.object);
      else if ("reason" in parsed) {
        invalid.push({ kind: parsed.kind, name: parsed.name, reason: parsed.reason, object: raw });
        // A refused object whose absence would open a guard is served as its stand-in (closed).
        const standIn = refusedStandIn(kind, raw, parsed.reason);
        if (standIn !== undefined) fields[knownKinds[kind].field].push(standIn);
      }
    }
  }
  for (const key of cache.keys()) if (!seen.has(key)) cache.delete(key);
  return { snapshot: fields as unknown as ResourceSnapshot, invalid };
}

/**
 * `namespace/name` of every Secret a Gateway listener (`tls.certificateRefs`, core Secrets only) or the
 * Gateway's `spec.tls.backend.clientCertificateRef` (judged for its ResolvedRefs condition) or its
 * `spec.tls.frontend` CA references (kind Secret), an
 * Ingress (`spec.tls[].secretName`, ingress-nginx `auth-tls-secret`, `auth-secret` and `proxy-ssl-secret`) or a policy (any `secretRef: { name }` in its spec, same namespace)
 * names, plus `always` (the `--default-certificate` Secret, which no object names). Only these are kept
 * in memory with their data.
 */
export function referencedSecrets(
  snapshot: Pick<ResourceSnapshot, "gateways" | "ingresses"> & { readonly authPolicies?: readonly unknown[] },
  always: Iterable<string> = [],
): Set<string> {
  const out = new Set<string>(always);
  for (const policy of snapshot.authPolicies ?? []) {
    const p = policy as { metadata?: { namespace?: string }; spec?: unknown };
    collectSecretRefs(p.spec, p.metadata?.namespace ?? "default", out);
  }
  for (const gw of snapshot.gateways) {
    const ns = gw.metadata.namespace ?? "default";
    const refs = (gw.spec?.listeners ?? []).flatMap((l) => l.tls?.certificateRefs ?? []);
    const client = gw.spec?.tls?.backend?.clientCertificateRef;
    for (const ref of client ? [...refs, client] : refs) {
      if ((ref.group ?? "") === "" && (ref.kind ?? "Secret") === "Secret")
        out.add(`${ref.namespace ?? ns}/${ref.name}`);
    }
    for (const key of frontendCARefs(gw, "Secret")) out.add(key);
  }
  for (const ing of snapshot.ingresses) {
    const ns = ing.metadata.namespace ?? "default";
    for (const t of ing.spec?.tls ?? []) if (t.secretName) out.add(`${ns}/${t.secretName}`);
    const users = authSecret(ing);
    if (users !== undefined) out.add(users);
    const authTLS = authTLSSecret(ing);
    if (authTLS !== undefined) out.add(authTLS);
    const proxySSL = proxySSLSecret(ing);
    if (proxySSL !== undefined) out.add(proxySSL);
  }
  return out;
}

/** Every `secretRef: { name }` and `credentialRefs: [{ name }]` anywhere in a policy spec (keys, OIDC client secrets, …). */
function collectSecretRefs(value: unknown, namespace: string, out: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) collectSecretRefs(v, namespace, out);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const name = (v as { name?: unknown } | null)?.name;
      if (k === "secretRef" && typeof name === "string") out.add(`${namespace}/${name}`);
      else if (k === "credentialRefs" && Array.isArray(v)) {
        // API keys (`apiKeyAuth.credentialRefs`): a list of Secret names.
        for (const ref of v) {
          const n = (ref as { name?: unknown } | null)?.name;
          if (typeof n === "string") out.add(`${namespace}/${n}`);
        }
      } else collectSecretRefs(v, namespace, out);
    }
  }
}

/**
 * `namespace/name` of every ConfigMap an Ingress names in ingress-nginx's `custom-headers` (in its own
 * namespace; nginx-references.ts reads the value), a Gateway names as a client CA (`spec.tls.frontend`)
 * or a BackendTLSPolicy names in `validation.caCertificateRefs` (core ConfigMaps, in its own namespace),
 * plus `always` (the `--error-pages-configmap` one, which no object names). Only these are kept in memory
 * with their data.
 */
export function referencedConfigMaps(
  ingresses: readonly unknown[],
  gateways: readonly unknown[] = [],
  backendTLSPolicies: readonly unknown[] = [],
  always: Iterable<string> = [],
): Set<string> {
  const out = new Set<string>(always);
  for (const ing of ingresses) {
    const key = customHeadersConfigMap(ing as Ingress);
    if (key !== undefined) out.add(key);
  }
  for (const gw of gateways) for (const key of frontendCARefs(gw as Gateway, "ConfigMap")) out.add(key);
  for (const p of backendTLSPolicies) for (const key of backendTLSCARefs(p)) out.add(key);
  return out;
}

/** `namespace/name` of the core ConfigMaps a BackendTLSPolicy's `validation.caCertificateRefs` name (read loosely). */
function backendTLSCARefs(policy: unknown): string[] {
  const p = (policy ?? {}) as { metadata?: { namespace?: unknown }; spec?: { validation?: unknown } };
  const ns =
    typeof p.metadata?.namespace === "string" && p.metadata.namespace ? p.metadata.namespace : "default";
  const refs = (p.spec?.validation as { caCertificateRefs?: unknown } | null | undefined)?.caCertificateRefs;
  const out: string[] = [];
  for (const r of Array.isArray(refs) ? refs : []) {
    const ref = (r ?? {}) as { group?: unknown; kind?: unknown; name?: unknown };
    if ((ref.group ?? "") === "" && ref.kind === "ConfigMap" && typeof ref.name === "string")
      out.push(`${ns}/${ref.name}`);
  }
  return out;
}

/**
 * `namespace/name` of the core objects of `kind` a Gateway's `spec.tls.frontend` (default and every
 * perPort entry) names in `caCertificateRefs`. Read loosely: the schema leaves `validation` open, and
 * translate judges each reference (frontend-validation.ts); a reference is kept whether or not a
 * ReferenceGrant allows it, so that the condition can say which it is.
 */
function frontendCARefs(gw: Gateway, kind: "ConfigMap" | "Secret"): string[] {
  const frontend = gw.spec?.tls?.frontend;
  if (!frontend) return [];
  const ns = gw.metadata.namespace ?? "default";
  const configs = [frontend.default, ...(frontend.perPort ?? []).map((p) => p?.tls)];
  const out: string[] = [];
  for (const c of configs) {
    const refs = (c?.validation as { caCertificateRefs?: unknown } | null | undefined)?.caCertificateRefs;
    for (const r of Array.isArray(refs) ? refs : []) {
      const ref = (r ?? {}) as { group?: unknown; kind?: unknown; name?: unknown; namespace?: unknown };
      if ((ref.group ?? "") !== "" || ref.kind !== kind || typeof ref.name !== "string") continue;
      out.push(`${typeof ref.namespace === "string" && ref.namespace ? ref.namespace : ns}/${ref.name}`);
    }
  }
  return out;
}
