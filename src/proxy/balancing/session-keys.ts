/**
 * The keys that sign timed session tokens (timed-token.ts), one set per process, shared by every
 * replica: in a cluster from a Secret the leader creates (sources/kubernetes/session-key-secret.ts), in
 * folder mode from `--session-key-file`. `current` signs; `previous` (a rotation) still verifies, so a
 * rotation ends no session. Until one of those is installed, a random per-process key signs: sessions
 * then neither survive a restart nor span replicas, and `serve` logs so.
 */
import { randomBytes } from "node:crypto";

export interface SessionKeys {
  readonly current: Uint8Array;
  readonly previous?: Uint8Array;
}

/** Bytes a key must have at least (HMAC-SHA256: a shorter key weakens the MAC). */
export const MIN_KEY_BYTES = 16;
/** Bytes of a generated key. */
export const KEY_BYTES = 32;

let keys: SessionKeys = { current: randomBytes(KEY_BYTES) };

export function sessionKeys(): SessionKeys {
  return keys;
}

/** Install the shared keys (file or Secret); a key shorter than MIN_KEY_BYTES is refused. */
export function setSessionKeys(next: SessionKeys): void {
  for (const k of [next.current, next.previous])
    if (k !== undefined && k.length < MIN_KEY_BYTES)
      throw new Error(`a session key needs at least ${MIN_KEY_BYTES} bytes, got ${k.length}`);
  keys = next;
}

/**
 * Keys from a file's text: one key per line, base64 (or base64url) of at least MIN_KEY_BYTES bytes;
 * the first line is `current`, a second line `previous`. Blank lines and `#` comments are skipped.
 */
export function parseSessionKeys(text: string): SessionKeys {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  if (lines.length === 0 || lines.length > 2)
    throw new Error(`expected one or two keys (current, previous), one per line; got ${lines.length}`);
  const [current, previous] = lines.map(decodeKey) as [Uint8Array, Uint8Array | undefined];
  return previous === undefined ? { current } : { current, previous };
}

/** A key in base64 or base64url; at least MIN_KEY_BYTES bytes. */
export function decodeKey(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new Error("a session key must be base64");
  const bytes = Buffer.from(text.replaceAll("-", "+").replaceAll("_", "/"), "base64");
  if (bytes.length < MIN_KEY_BYTES)
    throw new Error(`a session key needs at least ${MIN_KEY_BYTES} bytes, got ${bytes.length}`);
  return new Uint8Array(bytes);
}
