/**
 * Talking to the OpenID provider's token endpoint: the authorization code exchange (with the PKCE
 * verifier) and refresh, client authentication `client_secret_basic`, a short timeout; and ID token
 * verification (issuer, audience = client, pinned algorithms, `exp` required, nonce on login).
 */
import { jwtVerify } from "jose";
import type { OIDCAuth } from "../model/index.ts";
import type { KeyLookup, ProviderMetadata } from "./jwks.ts";

export interface TokenResponse {
  readonly id_token?: string;
  readonly access_token?: string;
  readonly refresh_token?: string;
  readonly expires_in?: number;
}

export interface TokenClient {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
}

export async function tokenRequest(
  oidc: OIDCAuth,
  meta: ProviderMetadata,
  params: Record<string, string>,
  client: TokenClient,
): Promise<TokenResponse> {
  if (!meta.token_endpoint) throw new Error("the provider has no token_endpoint");
  // RFC 6749 §2.3.1: id and secret are form-urlencoded before Basic encoding.
  const basic = btoa(`${encodeURIComponent(oidc.clientId)}:${encodeURIComponent(oidc.clientSecret)}`);
  const res = await client.fetch(meta.token_endpoint, {
    method: "POST",
    headers: {
      authorization: `Basic ${basic}`,
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    },
    body: new URLSearchParams(params).toString(),
    signal: AbortSignal.timeout(client.timeoutMs),
    redirect: "error",
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`token endpoint: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as TokenResponse;
}

/** Verified ID token claims; throws when anything does not hold. */
export async function verifyIdToken(
  idToken: string,
  oidc: OIDCAuth,
  keys: KeyLookup,
  nonce: string | undefined,
): Promise<Record<string, unknown>> {
  const { payload } = await jwtVerify(idToken, keys, {
    issuer: oidc.issuer,
    audience: oidc.clientId,
    algorithms: [...oidc.algorithms],
    clockTolerance: oidc.clockSkewSeconds,
    requiredClaims: ["exp", "sub"],
  });
  if (nonce !== undefined && payload.nonce !== nonce) throw new Error("ID token nonce does not match");
  return payload as Record<string, unknown>;
}

/** Random URL-safe text for state, nonce and the PKCE verifier (32 bytes of entropy). */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** RFC 7636 S256 code challenge. */
export function codeChallenge(verifier: string): string {
  return Bun.CryptoHasher.hash("sha256", verifier, "base64url") as string;
}
