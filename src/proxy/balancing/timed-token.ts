/**
 * Timed session tokens, for sessions with an `absoluteTimeout` or `idleTimeout` (GEP-1619): the
 * endpoint token (session-token.ts) plus when the session began and when it was last used, signed so a
 * client cannot extend its session:
 *
 *     <endpoint token>.<start ms, base 36>.<last use ms, base 36>.<MAC>
 *
 * MAC: the first 16 bytes of HMAC-SHA256 over the session name and the three fields, base64url, under
 * the shared key (session-keys.ts; a rotation's previous key still verifies), compared in constant
 * time. A token that does not verify, or whose session has ended, counts as absent: the request is
 * balanced anew and gets a new token. Never an error.
 */
import { timingSafeEqual } from "node:crypto";
import { type SessionKeys, sessionKeys } from "./session-keys.ts";

/** Bytes of the HMAC kept in the token (128 bits). */
const MAC_BYTES = 16;
/** A token longer than this is not one of ours (16 + 2 × 11 + 22 + 3 separators, with room). */
const MAX_LENGTH = 96;
/**
 * A token whose last-use stamp is older than this share of the idle timeout is reissued with a fresh
 * stamp: the client's idle clock restarts without a Set-Cookie on every response.
 */
export const REISSUE_SHARE = 1 / 4;

export interface SessionTimeouts {
  readonly absoluteMs?: number;
  readonly idleMs?: number;
}

export interface TimedToken {
  /** The endpoint token (16 hex digits). */
  readonly endpoint: string;
  readonly startMs: number;
  readonly lastMs: number;
}

/** Bun's HMAC: some 2.5× faster here than node:crypto's createHmac. */
function mac(key: Uint8Array, name: string, body: string): Buffer {
  const digest = new Bun.CryptoHasher("sha256", key).update(`${name}\n${body}`).digest();
  return Buffer.from(digest.buffer, digest.byteOffset, MAC_BYTES);
}

/** A signed token for a session `name` (cookie or header name: a token is not valid under another). */
export function signToken(name: string, t: TimedToken): string {
  const body = `${t.endpoint}.${t.startMs.toString(36)}.${t.lastMs.toString(36)}`;
  return `${body}.${mac(sessionKeys().current, name, body).toString("base64url")}`;
}

/**
 * The token's fields when its MAC verifies under the current or the previous key and its session has
 * not ended at `now`; else undefined (forged, tampered, signed by an unknown key, or expired).
 */
export function verifyToken(
  name: string,
  token: string,
  timeouts: SessionTimeouts,
  now: number,
): TimedToken | undefined {
  if (token.length > MAX_LENGTH) return undefined;
  const keys = sessionKeys();
  if (keys !== verifiedUnder || verified.size >= VERIFIED_CAP) {
    verified.clear();
    verifiedUnder = keys;
  }
  const key = `${name}\n${token}`;
  let t = verified.get(key);
  if (t === undefined) {
    t = checkMac(name, token);
    if (t === undefined) return undefined;
    verified.set(key, t);
  }
  return ended(t, timeouts, now) ? undefined : t;
}

/**
 * Tokens whose MAC verified under `verifiedUnder` (a client sends the same token until it is reissued):
 * the HMAC, a few µs, is then skipped. Expiry is still judged on every request; new keys clear it.
 */
const verified = new Map<string, TimedToken>();
const VERIFIED_CAP = 10_000;
let verifiedUnder: SessionKeys | undefined;

function checkMac(name: string, token: string): TimedToken | undefined {
  const dot = token.lastIndexOf(".");
  if (dot < 0) return undefined;
  const body = token.slice(0, dot);
  const parts = body.split(".");
  if (parts.length !== 3) return undefined;
  const [endpoint, start, last] = parts as [string, string, string];
  if (!/^[0-9a-f]{16}$/.test(endpoint) || !/^[0-9a-z]{1,11}$/.test(start) || !/^[0-9a-z]{1,11}$/.test(last))
    return undefined;
  const given = Buffer.from(token.slice(dot + 1), "base64url");
  if (given.length !== MAC_BYTES) return undefined;
  const { current, previous } = sessionKeys();
  if (!timingSafeEqual(given, mac(current, name, body)))
    if (previous === undefined || !timingSafeEqual(given, mac(previous, name, body))) return undefined;
  return { endpoint, startMs: Number.parseInt(start, 36), lastMs: Number.parseInt(last, 36) };
}

/** The session has ended: `absoluteMs` after it began, or `idleMs` after its last use. */
export function ended(t: TimedToken, timeouts: SessionTimeouts, now: number): boolean {
  if (timeouts.absoluteMs !== undefined && now - t.startMs >= timeouts.absoluteMs) return true;
  if (timeouts.idleMs !== undefined && now - t.lastMs >= timeouts.idleMs) return true;
  // A stamp from the future (clock skew between replicas beyond the idle timeout) is not trusted.
  return t.lastMs < t.startMs || t.lastMs - now > (timeouts.idleMs ?? timeouts.absoluteMs ?? 0);
}

/** Whether a valid token's last-use stamp is old enough to hand out a fresh one. */
export function dueForReissue(t: TimedToken, timeouts: SessionTimeouts, now: number): boolean {
  return timeouts.idleMs !== undefined && now - t.lastMs >= timeouts.idleMs * REISSUE_SHARE;
}
