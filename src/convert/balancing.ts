/**
 * A route's balancing (model/balancing.ts) in an HTTPRoute rule: a session becomes the rule's
 * `sessionPersistence` (experimental, GEP-1619), which Gatehouse's HTTPRoute translation turns back into
 * the same session (translate/gateway/httproute/session-persistence.ts); what it has no field for (the
 * algorithm, cookie attributes other than a lifetime) goes to `lost`.
 */
import type { Balancing } from "../model/index.ts";

type Json = Record<string, unknown>;

const ALGORITHM_SOURCE: Readonly<Record<Balancing["algorithm"], string>> = {
  RoundRobin: "",
  EWMA: "EWMA balancing (load-balance: ewma)",
  ConsistentHash: "consistent hashing (upstream-hash-by)",
  LeastRequest: "least-request balancing",
};

/** The rule's `sessionPersistence`, or undefined; what cannot be written is pushed to `lost`. */
export function convertBalancing(
  b: Balancing,
  lost: string[],
  /** rules.ts durationOf (passed in: rules.ts imports this file). */
  duration: (ms: number) => string,
): Json | undefined {
  if (b.algorithm !== "RoundRobin")
    lost.push(`the ${ALGORITHM_SOURCE[b.algorithm]}: Gateway API has no field for it`);
  const s = b.session;
  if (s === undefined) return undefined;
  const timeouts: Json = {};
  if (s.absoluteTimeoutMs !== undefined) timeouts.absoluteTimeout = duration(s.absoluteTimeoutMs);
  if (s.idleTimeoutMs !== undefined) timeouts.idleTimeout = duration(s.idleTimeoutMs);
  if (s.type === "Header") return { type: "Header", sessionName: s.name, ...timeouts };
  const c = s.cookie ?? {};
  const attributes = [
    c.path !== undefined && c.path !== "/" ? `Path=${c.path}` : "",
    c.domain !== undefined ? `Domain=${c.domain}` : "",
    c.expiresSeconds !== undefined ? "Expires" : "",
    c.sameSite !== undefined ? `SameSite=${c.sameSite}` : "",
    c.secure !== undefined ? `${c.secure ? "" : "no "}Secure` : "",
    s.changeOnFailure ? "change-on-failure" : "",
  ].filter(Boolean);
  if (attributes.length > 0)
    lost.push(`the session cookie's ${attributes.join(", ")} (sessionPersistence has no field for them)`);
  const out: Json = { type: "Cookie", sessionName: s.name, ...timeouts };
  if (c.maxAgeSeconds !== undefined && c.maxAgeSeconds > 0) {
    out.absoluteTimeout = duration(c.maxAgeSeconds * 1000);
    out.cookieConfig = { lifetimeType: "Permanent" };
  }
  return out;
}
