/**
 * An AuthPolicy's `basicAuth` and `apiKeyAuth` (docs/auth.md), shaped after Envoy Gateway's SecurityPolicy
 * fields of the same names: a user table from a Secret (htpasswd text, or one entry per user as
 * ingress-nginx's `auth-map`), and API keys from Secrets whose entries are `name: key`. A missing Secret
 * or one with no usable user or key fails the policy closed; a bad line refuses that user only (warning).
 */
import type { APIKeyAuth, APIKeySource, BasicAuth } from "../../model/index.ts";
import { apiKeys, basicUsers, type SecretIndex } from "../common/credential-secrets.ts";
import { type AuthPolicySpec, reservedHeaders } from "./auth-policy-spec.ts";

/** The data key an htpasswd text is read from when `secretRef.key` is not given (ingress-nginx's). */
export const defaultHtpasswdKey = "auth";
/** The header the name of the key that got in is sent upstream in, unless the policy names another. */
export const defaultClientIDHeader = "x-api-key-name";
const defaultKeySources: readonly APIKeySource[] = [{ type: "Header", name: "x-api-key" }];

export interface CredentialMethods {
  readonly basic?: BasicAuth;
  readonly apiKeys?: APIKeyAuth;
}

export function credentialMethods(
  spec: AuthPolicySpec,
  namespace: string,
  defaultRealm: string,
  secrets: SecretIndex,
  errors: string[],
  warnings: string[],
): CredentialMethods {
  let basic: BasicAuth | undefined;
  const b = spec.basicAuth;
  if (b !== undefined) {
    const field = "spec.basicAuth.secretRef";
    const format = b.format ?? "File";
    const dataKey = b.secretRef.key ?? defaultHtpasswdKey;
    if (format === "Map" && b.secretRef.key !== undefined)
      errors.push(`${field}.key: a Map Secret holds one user per key; name no key`);
    const key = `${namespace}/${b.secretRef.name}`;
    const users = basicUsers(secrets, key, format, dataKey, field, errors, warnings) ?? [];
    const usernameHeader = checkedHeader(
      b.forwardUsernameHeader,
      "spec.basicAuth.forwardUsernameHeader",
      errors,
    );
    basic = { realm: b.realm ?? defaultRealm, users, ...(usernameHeader ? { usernameHeader } : {}) };
  }
  let keys: APIKeyAuth | undefined;
  const a = spec.apiKeyAuth;
  if (a !== undefined) {
    const refs = a.credentialRefs.map((r) => `${namespace}/${r.name}`);
    const list = apiKeys(secrets, refs, "spec.apiKeyAuth.credentialRefs", errors, warnings);
    const sources = (a.extractFrom ?? defaultKeySources).map(
      (s): APIKeySource => (s.type === "Header" ? { type: "Header", name: s.name.toLowerCase() } : s),
    );
    sources.forEach((s, i) => {
      if (s.type === "Header" && reservedHeaders.has(s.name))
        errors.push(
          `spec.apiKeyAuth.extractFrom[${i}].name "${s.name}": reserved, keys cannot be read from it`,
        );
    });
    const clientIDHeader =
      checkedHeader(a.forwardClientIDHeader, "spec.apiKeyAuth.forwardClientIDHeader", errors) ??
      defaultClientIDHeader;
    if (sources.some((s) => s.type === "Header" && s.name === clientIDHeader))
      errors.push(`spec.apiKeyAuth.forwardClientIDHeader "${clientIDHeader}": also a source of keys`);
    keys = { sources, keys: list, clientIDHeader, sanitize: a.sanitize ?? true };
  }
  if (spec.oidc !== undefined && (basic !== undefined || keys !== undefined))
    errors.push("spec.oidc cannot be combined with spec.basicAuth or spec.apiKeyAuth");
  return { ...(basic ? { basic } : {}), ...(keys ? { apiKeys: keys } : {}) };
}

function checkedHeader(name: string | undefined, field: string, errors: string[]): string | undefined {
  if (name === undefined) return undefined;
  const lower = name.toLowerCase();
  if (reservedHeaders.has(lower)) {
    errors.push(`${field} "${name}": reserved, nothing can be written there`);
    return undefined;
  }
  return lower;
}
