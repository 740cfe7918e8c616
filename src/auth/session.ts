/**
 * Browser session state in cookies, sealed with jose JWE (`dir` + A256GCM, 32-byte key from a Secret):
 * the client can neither read nor alter it, and an expired or foreign cookie simply does not open.
 */
import { EncryptJWT, jwtDecrypt } from "jose";

/** The logged-in session. Short keys keep the cookie under the 4 KB browsers allow. */
export interface Session {
  /** Verified ID token claims. */
  readonly c: Record<string, unknown>;
  /** When the session needs a refresh (ms): the ID token's `exp` or the access token's lifetime. */
  readonly ae: number;
  /** Refresh token, when the provider issued one. */
  readonly rt?: string;
  /** The raw ID token, for `id_token_hint` at logout; left out when it would make the cookie too big. */
  readonly it?: string;
}

/** A login in progress: what the callback must see again. */
export interface LoginTransaction {
  /** state */
  readonly s: string;
  /** nonce */
  readonly n: string;
  /** PKCE code verifier */
  readonly v: string;
  /** Where to return after login: path and query on this host. */
  readonly u: string;
}

export async function seal(payload: object, key: Uint8Array, ttlSeconds: number): Promise<string> {
  return new EncryptJWT({ ...payload } as Record<string, unknown>)
    .setProtectedHeader({ alg: "dir", enc: "A256GCM" })
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .encrypt(key);
}

/** The payload, or undefined when the cookie is absent, expired, tampered with or sealed with another key. */
export async function unseal<T>(value: string | undefined, key: Uint8Array): Promise<T | undefined> {
  if (!value || value.length > 8192) return undefined;
  try {
    const { payload } = await jwtDecrypt(value, key, {
      keyManagementAlgorithms: ["dir"],
      contentEncryptionAlgorithms: ["A256GCM"],
    });
    return payload as T;
  } catch {
    return undefined;
  }
}

export interface CookieOptions {
  readonly domain?: string;
  readonly secure: boolean;
}

export function setCookie(name: string, value: string, maxAgeSeconds: number, o: CookieOptions): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${o.secure ? "; Secure" : ""}${o.domain ? `; Domain=${o.domain}` : ""}`;
}

export function clearCookie(name: string, o: CookieOptions): string {
  return setCookie(name, "", 0, o);
}
