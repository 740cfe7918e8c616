/**
 * Checking a password against one htpasswd hash, in the schemes `htpasswd` writes: bcrypt (`$2y$`, and
 * `$2a$`/`$2b$` from other tools), `$apr1$` (MD5-crypt), `{SHA}` (and `{SSHA}`, which nginx also reads).
 * Every comparison of derived bytes is `timingSafeEqual`. bcrypt is the only slow one (tens of
 * milliseconds at cost 10): it runs on Bun's thread pool (`Bun.password.verify`), never on the event
 * loop, and the caller caps how many run at once (verify-gate.ts). The others cost microseconds and
 * answer synchronously.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { hashScheme } from "../../model/htpasswd-syntax.ts";
import { apr1, apr1Salt } from "./apr1.ts";

/** bcrypt reads at most 72 bytes; Bun pre-hashes longer input, which htpasswd's hashes do not expect. */
const BCRYPT_MAX_BYTES = 72;

/**
 * True when `password` (its bytes, or a string taken as UTF-8) matches `stored`. Synchronous except for
 * bcrypt. A hash of no known scheme never matches (translate already reported it and left the user out;
 * model/htpasswd-syntax.ts).
 */
export function verifyPassword(stored: string, password: string | Buffer): boolean | Promise<boolean> {
  const pw = typeof password === "string" ? Buffer.from(password, "utf8") : password;
  switch (hashScheme(stored)) {
    case "bcrypt":
      return Bun.password
        .verify(pw.length > BCRYPT_MAX_BYTES ? pw.subarray(0, BCRYPT_MAX_BYTES) : pw, stored)
        .catch(() => false);
    case "apr1":
      return sameBytes(apr1(pw, apr1Salt(stored) ?? ""), stored);
    case "sha1":
      return sameBytes(createHash("sha1").update(pw).digest(), Buffer.from(stored.slice(5), "base64"));
    case "ssha": {
      const parts = sshaParts(stored);
      if (parts === undefined) return false;
      const digest = createHash("sha1").update(pw).update(parts.salt).digest();
      return sameBytes(digest, parts.digest);
    }
    default:
      return false;
  }
}

/** Whether verifying this hash is slow enough to need the thread pool and the cap. */
export function isSlowHash(stored: string): boolean {
  return stored.startsWith("$2");
}

function sshaParts(stored: string): { digest: Buffer; salt: Buffer } | undefined {
  const raw = Buffer.from(stored.slice(6), "base64");
  if (raw.length <= 20) return undefined;
  return { digest: raw.subarray(0, 20), salt: raw.subarray(20) };
}

/** Constant-time equality; lengths differ only when the stored hash is of another shape. */
function sameBytes(a: Buffer | string, b: Buffer | string): boolean {
  const x = typeof a === "string" ? Buffer.from(a) : a;
  const y = typeof b === "string" ? Buffer.from(b) : b;
  return x.length === y.length && timingSafeEqual(x, y);
}
