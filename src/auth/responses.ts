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
  | "oidc_error"
  | "invalid_credentials"
  | "verify_busy"
  | "external_denied"
  | "external_error";

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

/**
 * 401 for a route that takes basic auth or API keys (besides, maybe, bearer tokens): one challenge per
 * method the route accepts (RFC 9110 §11.6.1), `Basic` with the policy's realm and `charset="UTF-8"`
 * (RFC 7617 §2.1). API keys have no registered scheme; `ApiKey` names the header or parameter to send.
 */
export function credentialsRequired(challenges: readonly string[]): Response {
  return new Response("401 Unauthorized\n", {
    status: 401,
    headers: {
      "www-authenticate": challenges.join(", "),
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
    },
  });
}

/** 503 when too many password verifications are already running and queued: try again in a second. */
export function verificationBusy(): Response {
  return new Response("503 Service Unavailable\n", {
    status: 503,
    headers: { "retry-after": "1", "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}

export function basicChallenge(realm: string): string {
  return `Basic realm=${quoted(realm)}, charset="UTF-8"`;
}

export function bearerChallenge(realm: string): string {
  return `Bearer realm=${quoted(realm)}`;
}

export function apiKeyChallenge(realm: string, source: string): string {
  return `ApiKey realm=${quoted(realm)}, in=${quoted(source)}`;
}
