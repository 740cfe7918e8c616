/**
 * Refusals: 401 with `WWW-Authenticate: Bearer` (RFC 6750 §3) when the token is missing or invalid, 403
 * with `error="insufficient_scope"` when an authorization rule fails. A missing token gets no error
 * code, as §3.1 asks. Descriptions are fixed texts, never token content.
 */

/** Fixed set of failure reasons: metric label values and log fields. */
export type AuthFailureReason =
  | "missing_token"
  | "invalid_token"
  | "expired"
  | "unknown_key"
  | "keys_unavailable"
  | "forbidden"
  | "policy_invalid"
  | "login_required"
  | "oidc_error";

function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, "\\$&")}"`;
}

export function unauthorized(
  realm: string,
  error?: "invalid_token" | "invalid_request",
  description?: string,
): Response {
  let challenge = `Bearer realm=${quoted(realm)}`;
  if (error) challenge += `, error=${quoted(error)}`;
  if (description) challenge += `, error_description=${quoted(description)}`;
  return new Response("401 Unauthorized\n", {
    status: 401,
    headers: {
      "www-authenticate": challenge,
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
    },
  });
}

export function forbidden(realm: string, missingScopes: readonly string[]): Response {
  let challenge = `Bearer realm=${quoted(realm)}, error="insufficient_scope"`;
  if (missingScopes.length > 0) challenge += `, scope=${quoted(missingScopes.join(" "))}`;
  return new Response("403 Forbidden\n", {
    status: 403,
    headers: {
      "www-authenticate": challenge,
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
    },
  });
}
