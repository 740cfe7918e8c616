/**
 * One AuthPolicy's spec as a `RouteAuth`. Every problem is collected; when there is any, the result still
 * carries what could be built plus `failClosed`, so the routes it attaches to answer 401 (never open).
 */
import type {
  ClaimToHeader,
  JWTProvider,
  KeySource,
  OIDCAuth,
  RouteAuth,
  SourceRef,
  TokenSource,
} from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import { credentialMethods } from "./auth-policy-credentials.ts";
import { policyExternalAuth } from "./auth-policy-external.ts";
import { onlyIPLists, policyIPAccess } from "./auth-policy-ip.ts";
import {
  type AuthPolicySpec,
  asymmetricAlgorithms,
  authPolicySpec,
  checkURL,
  describeSpecIssues,
  reservedHeaders,
  withoutCredentials,
} from "./auth-policy-spec.ts";

/** `<ns>/<name>` → Secret. */
export type SecretIndex = ReadonlyMap<string, Secret>;

const defaultTokenSources: readonly TokenSource[] = [
  { type: "Header", name: "authorization", prefix: "Bearer " },
];
const defaultClockSkew = 30;

/** `warnings`: what the policy's routes are served despite (a refused htpasswd line, an empty API key). */
export function buildRouteAuth(
  policy: SourceRef,
  rawSpec: unknown,
  secrets: SecretIndex,
  warnings: string[] = [],
): RouteAuth {
  const empty: RouteAuth = {
    policy,
    authorization: { requiredScopes: [], requiredClaims: [] },
    claimToHeaders: [],
  };
  const parsed = authPolicySpec.safeParse(rawSpec);
  if (!parsed.success) return { ...empty, failClosed: describeSpecIssues(parsed.error) };
  const spec = parsed.data;
  const errors: string[] = [];
  const providers = (spec.jwt?.providers ?? []).map((p, i) =>
    jwtProvider(p, `spec.jwt.providers[${i}]`, policy.namespace, secrets, errors),
  );
  const issuers = providers.map((p) => p.issuer);
  if (new Set(issuers).size !== issuers.length) errors.push("spec.jwt.providers: issuers must be distinct");
  const oidc = spec.oidc ? oidcAuth(spec.oidc, policy.namespace, secrets, errors) : undefined;
  const realm = `${policy.namespace}/${policy.name}`;
  const credentials = credentialMethods(spec, policy.namespace, realm, secrets, errors, warnings);
  const external = policyExternalAuth(spec, errors);
  const hasCredentials =
    credentials.basic !== undefined || credentials.apiKeys !== undefined || external !== undefined;
  policyIPAccess(policy, spec, errors);
  if (onlyIPLists(spec) && (spec.ipAllowList?.length ?? 0) + (spec.ipDenyList?.length ?? 0) === 0)
    errors.push("spec.ipAllowList and spec.ipDenyList are both empty: the policy asks for nothing");
  else if (providers.length === 0 && oidc === undefined && !hasCredentials && !onlyIPLists(spec))
    errors.push(
      "the policy names no provider: set spec.jwt.providers, spec.oidc, spec.basicAuth, spec.apiKeyAuth or spec.externalAuth",
    );
  const claimToHeaders: ClaimToHeader[] = [];
  for (const [i, c] of (spec.claimToHeaders ?? []).entries()) {
    const header = c.header.toLowerCase();
    if (reservedHeaders.has(header))
      errors.push(`spec.claimToHeaders[${i}].header "${c.header}": reserved, claims cannot be written there`);
    else if (claimToHeaders.some((x) => x.header === header))
      errors.push(`spec.claimToHeaders[${i}].header "${c.header}": named twice`);
    else claimToHeaders.push({ claim: c.claim, header });
  }
  return {
    policy,
    ...(errors.length > 0 ? { failClosed: errors.join("; ") } : {}),
    ...(providers.length > 0
      ? { jwt: { providers, tokenSources: tokenSources(spec.jwt?.tokenSources) } }
      : {}),
    ...(oidc ? { oidc } : {}),
    ...credentials,
    ...(external !== undefined ? { external } : {}),
    ...(spec.satisfy === "Any" ? { satisfy: "Any" as const } : {}),
    authorization: {
      requiredScopes: spec.authorization?.requiredScopes ?? [],
      requiredClaims: spec.authorization?.requiredClaims ?? [],
    },
    claimToHeaders,
  };
}

function tokenSources(list: NonNullable<AuthPolicySpec["jwt"]>["tokenSources"]): readonly TokenSource[] {
  if (!list) return defaultTokenSources;
  return list.map((s): TokenSource => {
    if (s.type === "Header")
      return {
        type: "Header",
        name: s.name.toLowerCase(),
        prefix: s.prefix ?? (s.name.toLowerCase() === "authorization" ? "Bearer " : ""),
      };
    return s.type === "Cookie" ? { type: "Cookie", name: s.name } : { type: "QueryParameter", name: s.name };
  });
}

type ProviderSpec = NonNullable<AuthPolicySpec["jwt"]>["providers"][number];

function jwtProvider(
  p: ProviderSpec,
  field: string,
  namespace: string,
  secrets: SecretIndex,
  errors: string[],
): JWTProvider {
  const bad = checkURL(p.issuer, `${field}.issuer`);
  if (bad) errors.push(bad);
  const audienceCheck = p.audienceCheck !== false;
  const audiences = p.audiences ?? [];
  if (audienceCheck && audiences.length === 0)
    errors.push(`${field}.audiences: required unless audienceCheck is false`);
  let keys: KeySource;
  if (p.keys.type === "RemoteJWKS") {
    const badUri = checkURL(p.keys.uri, `${field}.keys.uri`);
    if (badUri) errors.push(badUri);
    // A refused URL is kept only without its credentials (the policy fails closed either way).
    keys = { type: "RemoteJWKS", url: badUri ? withoutCredentials(p.keys.uri) : p.keys.uri };
  } else if (p.keys.type === "Discovery") {
    keys = { type: "Discovery" };
  } else {
    const ref = p.keys.secretRef;
    const text = secretValue(
      secrets,
      namespace,
      ref.name,
      ref.key ?? "jwks",
      `${field}.keys.secretRef`,
      errors,
    );
    const problem = text === undefined ? undefined : checkPublicJWKS(text);
    if (problem) errors.push(`${field}.keys.secretRef: Secret ${namespace}/${ref.name}: ${problem}`);
    keys = { type: "Inline", jwks: text ?? "" };
  }
  return {
    name: p.name,
    issuer: p.issuer,
    audiences,
    audienceCheck,
    keys,
    algorithms: p.algorithms ?? [...asymmetricAlgorithms],
    clockSkewSeconds: p.clockSkewSeconds ?? defaultClockSkew,
  };
}

function oidcAuth(
  o: NonNullable<AuthPolicySpec["oidc"]>,
  namespace: string,
  secrets: SecretIndex,
  errors: string[],
): OIDCAuth {
  for (const e of [
    checkURL(o.issuer, "spec.oidc.issuer"),
    checkURL(o.redirectURL, "spec.oidc.redirectURL", true),
    o.postLogoutRedirectURL ? checkURL(o.postLogoutRedirectURL, "spec.oidc.postLogoutRedirectURL", true) : "",
  ])
    if (e) errors.push(e);
  const ref = o.clientSecretRef;
  const clientSecret =
    secretValue(
      secrets,
      namespace,
      ref.name,
      ref.key ?? "client-secret",
      "spec.oidc.clientSecretRef",
      errors,
    ) ?? "";
  const keyRef = o.sessionKeyRef;
  const field = "spec.oidc.sessionKeyRef";
  const key = secretBytes(secrets, namespace, keyRef.name, keyRef.key ?? "session-key", field, errors);
  if (key !== undefined && key.length !== 32)
    errors.push(
      `${field}: Secret ${namespace}/${keyRef.name}: the key must be exactly 32 bytes, got ${key.length}`,
    );
  const scopes = ["openid", ...(o.scopes ?? []).filter((s) => s !== "openid")];
  // Bun's hasher, not node:crypto's createHash: the same digest without loading node:crypto into
  // `gatehouse translate`.
  const cookieId = new Bun.CryptoHasher("sha256")
    .update(`${o.issuer}\n${o.clientID}\n${o.cookieDomain ?? ""}`)
    .digest("hex")
    .slice(0, 12);
  return {
    issuer: o.issuer,
    clientId: o.clientID,
    clientSecret,
    redirectURL: o.redirectURL,
    logoutPath: o.logoutPath ?? "/oauth2/logout",
    ...(o.postLogoutRedirectURL ? { postLogoutRedirectURL: o.postLogoutRedirectURL } : {}),
    scopes,
    cookieName: `gatehouse-session-${cookieId}`,
    ...(o.cookieDomain ? { cookieDomain: o.cookieDomain } : {}),
    sessionKey: key?.length === 32 ? key.toString("base64") : "",
    algorithms: o.algorithms ?? [...asymmetricAlgorithms],
    clockSkewSeconds: o.clockSkewSeconds ?? defaultClockSkew,
  };
}

function secretBytes(
  secrets: SecretIndex,
  namespace: string,
  name: string,
  key: string,
  field: string,
  errors: string[],
): Buffer | undefined {
  const secret = secrets.get(`${namespace}/${name}`);
  if (!secret) {
    errors.push(`${field}: Secret ${namespace}/${name} not found`);
    return undefined;
  }
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return Buffer.from(plain, "utf8");
  const encoded = secret.data?.[key];
  if (encoded === undefined || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
    errors.push(`${field}: Secret ${namespace}/${name} has no valid key "${key}"`);
    return undefined;
  }
  return Buffer.from(encoded, "base64");
}

function secretValue(...args: Parameters<typeof secretBytes>): string | undefined {
  return secretBytes(...args)?.toString("utf8");
}

/** Why a JWKS text is unusable, or undefined: a JSON `keys` array of public asymmetric keys. */
export function checkPublicJWKS(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  const keys = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0) return 'no "keys" array';
  for (const k of keys as Record<string, unknown>[]) {
    if (k === null || typeof k !== "object") return "a key is not an object";
    if (k.kty !== "RSA" && k.kty !== "EC" && k.kty !== "OKP") return `key type "${String(k.kty)}" refused`;
    if ("d" in k) return "holds a private key; only public keys belong here";
  }
  return undefined;
}
