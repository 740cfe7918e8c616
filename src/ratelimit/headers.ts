/**
 * What clients are told (draft-ietf-httpapi-ratelimit-headers-11, Structured Fields):
 * - `RateLimit-Policy: "<rule>";q=<quota>;w=<window s>` per rule. GCRA is a token bucket, so the quota
 *   is the burst and the window the time to refill it from empty (`burst × window / limit`); with the
 *   default burst that is exactly the configured N per window.
 * - `RateLimit: "<rule>";r=<remaining>;t=<seconds until full>` per rule, for this request.
 * - A 429 carries `Retry-After` (seconds, always, even with headers hidden) and a problem+json body
 *   (RFC 9457); a Redis failure under failure mode Closed is a 503 with the same kind of body, and a
 *   limit that cannot be enforced (an invalid policy or annotation) a 500 naming it and why.
 */
import type { RouteRateLimit } from "../model/index.ts";
import type { ItemResult } from "./limiter.ts";

/** `RateLimit-Policy` of a limit; constant per configuration, so computed once (see enforce.ts). */
export function policyHeader(limit: RouteRateLimit): string {
  return limit.rules
    .map((r) => `${sfString(r.name)};q=${r.burst};w=${Math.ceil((r.burst * r.windowSeconds) / r.limit)}`)
    .join(", ");
}

/** `RateLimit` for this request, one item per rule in rule order. */
export function rateLimitHeader(limit: RouteRateLimit, results: readonly ItemResult[]): string {
  let out = "";
  for (let i = 0; i < limit.rules.length; i++) {
    const r = results[i];
    if (r === undefined) continue;
    if (out !== "") out += ", ";
    out += `${quotedName((limit.rules[i] as { name: string }).name)};r=${r.remaining};t=${Math.ceil(r.resetMs / 1000)}`;
  }
  return out;
}

/** Seconds for Retry-After: rounded up, at least 1 (a 0 would invite an immediate retry storm). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The 429: Retry-After, the RateLimit fields unless hidden, and a problem+json body. */
export function tooManyRequests(retryAfterMs: number, headers: readonly [string, string][]): Response {
  const seconds = retryAfterSeconds(retryAfterMs);
  return problem(429, "Too Many Requests", `Rate limit exceeded; retry after ${seconds} s.`, [
    ["retry-after", String(seconds)],
    ...headers,
  ]);
}

/** The 503 of failure mode Closed while the shared counter store cannot be reached. */
export function limiterUnavailable(): Response {
  return problem(503, "Service Unavailable", "The rate limit cannot be checked right now; retry shortly.", [
    ["retry-after", "1"],
  ]);
}

/** The 500 of a limit marked invalid: the policy and why it cannot be enforced; nothing is forwarded. */
export function invalidLimit(limit: RouteRateLimit): Response {
  return problem(
    500,
    "Internal Server Error",
    `The rate limit ${limit.policy} cannot be enforced (${limit.invalid ?? "invalid"}), so this route is not served.`,
    [],
  );
}

function problem(
  status: number,
  title: string,
  detail: string,
  headers: readonly [string, string][],
): Response {
  const body = JSON.stringify({ type: "about:blank", title, status, detail });
  return new Response(body, {
    status,
    headers: [["content-type", "application/problem+json"], ["cache-control", "no-store"], ...headers],
  });
}

/** Rule names as sf-strings, quoted once (a response header is built on every limited request). */
const quoted = new Map<string, string>();

function quotedName(name: string): string {
  let q = quoted.get(name);
  if (q === undefined) {
    q = sfString(name);
    if (quoted.size < 10_000) quoted.set(name, q);
  }
  return q;
}

/** An sf-string: quoted, with `"` and `\` escaped (rule names are validated tokens, but be safe). */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
