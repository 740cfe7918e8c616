/**
 * Bearer JWT verification. Cheap refusals first (size, shape, header), then jose checks the signature
 * with a key found by `kid` in the provider's key set and the claims: exact `iss`, `aud` (unless turned
 * off), `exp` required, `nbf`, each with the configured clock skew. Algorithms are pinned per provider to
 * asymmetric ones, so `alg: none` and HS256-signed-with-the-public-key are refused before any key is used.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from "jose";
import type { JWTProvider } from "../model/index.ts";
import { type Identity, identityFromClaims } from "./identity.ts";
import { type KeyLookup, KeysUnavailable } from "./jwks.ts";
import type { AuthFailureReason } from "./responses.ts";

/** Longest token accepted (bytes of its compact form). */
export const maxTokenLength = 8192;

export type VerifyResult =
  | { readonly ok: true; readonly identity: Identity }
  | { readonly ok: false; readonly reason: AuthFailureReason; readonly description: string };

const compactJWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Header parameters that point at keys elsewhere or carry their own: never followed, always refused. */
const refusedHeaders = ["jku", "x5u", "jwk", "x5c"] as const;

function fail(reason: AuthFailureReason, description: string): VerifyResult {
  return { ok: false, reason, description };
}

/** The provider a token claims to come from (by unverified `iss`); verification then checks it for real. */
export function pickProvider(providers: readonly JWTProvider[], token: string): JWTProvider | undefined {
  if (providers.length === 1) return providers[0];
  try {
    const iss = decodeJwt(token).iss;
    return providers.find((p) => p.issuer === iss);
  } catch {
    return undefined;
  }
}

/** Shape checks that need no key; undefined when the token may go on to signature verification. */
export function precheck(token: string, provider: JWTProvider): VerifyResult | undefined {
  if (token.length > maxTokenLength) return fail("invalid_token", "token too large");
  if (!compactJWS.test(token)) return fail("invalid_token", "malformed token");
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return fail("invalid_token", "malformed token");
  }
  if (typeof header.alg !== "string" || !provider.algorithms.includes(header.alg))
    return fail("invalid_token", "algorithm not accepted");
  for (const name of refusedHeaders)
    if (name in header) return fail("invalid_token", `header parameter ${name} not accepted`);
  return undefined;
}

export async function verifyJWT(
  token: string,
  provider: JWTProvider,
  keys: KeyLookup,
): Promise<VerifyResult> {
  const refused = precheck(token, provider);
  if (refused) return refused;
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer: provider.issuer,
      ...(provider.audienceCheck ? { audience: [...provider.audiences] } : {}),
      algorithms: [...provider.algorithms],
      clockTolerance: provider.clockSkewSeconds,
      requiredClaims: ["exp"],
    });
    return { ok: true, identity: identityFromClaims(payload as Record<string, unknown>, "jwt") };
  } catch (err) {
    return describeFailure(err);
  }
}

/** jose's error as a fixed reason and description: nothing from the token is echoed back. */
export function describeFailure(err: unknown): VerifyResult {
  if (err instanceof errors.JWTExpired) return fail("expired", "token expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    const claim = ["iss", "aud", "nbf", "exp", "iat"].includes(err.claim) ? err.claim : "claim";
    return fail("invalid_token", `${claim} check failed`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return fail("unknown_key", "no key matches the token");
  if (err instanceof KeysUnavailable) return fail("keys_unavailable", "signing keys unavailable");
  if (err instanceof errors.JWSSignatureVerificationFailed) return fail("invalid_token", "signature invalid");
  return fail("invalid_token", "token invalid");
}
