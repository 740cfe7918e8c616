/**
 * Session tokens: the value of a session cookie (or header) names an endpoint by a hash of its address
 * and port, 16 hex digits of xxHash64 (a fixed function: every replica and every restart gives the
 * same token). The gateway only looks tokens up among a route's current endpoints, never trusts them:
 * a forged one at most names another endpoint the route already serves, and one naming no current
 * endpoint counts as absent. Nothing secret is in it, so nothing needs signing; only sessions with
 * timeouts carry signed timestamps beside it (timed-token.ts).
 */
import type { SessionCookie, SessionPersistence } from "../../model/index.ts";
import type { CompiledBackend } from "../table.ts";

/** The token of an endpoint base (`http://ip:port`, `http://[v6]:port`). */
export function endpointToken(base: string): string {
  return Bun.hash.xxHash64(base.slice(7)).toString(16).padStart(16, "0");
}

const tokens = new WeakMap<CompiledBackend, Map<string, number>>();

/** Endpoint index by token, built once per compiled backend. */
export function tokenIndex(backend: CompiledBackend): Map<string, number> {
  let map = tokens.get(backend);
  if (map === undefined) {
    map = new Map(backend.bases.map((b, i) => [endpointToken(b), i]));
    tokens.set(backend, map);
  }
  return map;
}

/** The response field that hands out `token`: a Set-Cookie, or the session header itself. */
export function sessionField(
  session: SessionPersistence,
  token: string,
  https: boolean,
  userAgent: string | null,
): readonly [string, string] {
  if (session.type === "Header") return [session.name.toLowerCase(), token];
  return ["set-cookie", setCookie(session.name, token, session.cookie ?? {}, https, userAgent)];
}

function setCookie(
  name: string,
  token: string,
  c: SessionCookie,
  https: boolean,
  userAgent: string | null,
): string {
  let out = `${name}=${token}; Path=${c.path ?? "/"}`;
  if (c.domain !== undefined) out += `; Domain=${c.domain}`;
  if (c.expiresSeconds !== undefined)
    out += `; Expires=${new Date(Date.now() + c.expiresSeconds * 1000).toUTCString()}`;
  if (c.maxAgeSeconds !== undefined) out += `; Max-Age=${c.maxAgeSeconds}`;
  if (c.secure ?? https) out += "; Secure";
  out += "; HttpOnly";
  const sameSite = c.sameSite;
  if (
    sameSite !== undefined &&
    !(sameSite === "None" && c.conditionalSameSiteNone && !sameSiteNoneSafe(userAgent))
  )
    out += `; SameSite=${sameSite}`;
  return out;
}

/**
 * ingress-nginx's same_site_none_compatible (util/same_site.lua, after Chromium's list of clients that
 * reject `SameSite=None` cookies outright): Chrome 40–69, iOS 12, and Safari on macOS 10.14.
 */
export function sameSiteNoneSafe(ua: string | null): boolean {
  if (ua === null) return true;
  if (/Chrome\/[456]/.test(ua)) return false;
  if (ua.includes("CPU iPhone OS 12") || ua.includes("iPad; CPU OS 12")) return false;
  if (
    ua.includes("Macintosh") &&
    ua.includes("Intel Mac OS X 10_14") &&
    ua.includes("Safari") &&
    !ua.includes("Chrome")
  )
    return false;
  return true;
}
