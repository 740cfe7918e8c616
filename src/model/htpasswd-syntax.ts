/**
 * The htpasswd format, read as nginx's `auth_basic_user_file` reads it: one `user:hash` per line (text
 * after a second `:` is a comment), `#` lines and blank lines skipped, the first line of a user name wins.
 * Only hashes Gatehouse verifies are kept (auth/credentials/password-hash.ts): bcrypt, apr1-MD5, `{SHA}`,
 * `{SSHA}`. Pure text work (no crypto), so translation can judge a Secret without loading node:crypto.
 */
import type { BasicUser } from "./auth.ts";

export type HashScheme = "bcrypt" | "apr1" | "sha1" | "ssha";

const bcrypt = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;
const apr1 = /^\$apr1\$[^$]{0,8}\$[./0-9A-Za-z]{22}$/;
const sha1 = /^\{SHA\}[A-Za-z0-9+/]{27}=$/;
// 20 bytes of digest and at least one of salt, base64.
const ssha = /^\{SSHA\}[A-Za-z0-9+/]{28,}={0,2}$/;

/** The scheme of a stored hash, or undefined (crypt(3) DES, `$5$`/`$6$`, plain text: not verified). */
export function hashScheme(stored: string): HashScheme | undefined {
  if (bcrypt.test(stored)) return "bcrypt";
  if (apr1.test(stored)) return "apr1";
  if (sha1.test(stored)) return "sha1";
  if (ssha.test(stored) && stored.length % 4 === 2) return "ssha";
  return undefined;
}

/** The users of an htpasswd text, and what was wrong with the lines left out (never a hash in a message). */
export interface HtpasswdTable {
  readonly users: readonly BasicUser[];
  readonly problems: readonly string[];
}

/** At most this many problems are listed per table; the rest are counted. */
const MAX_PROBLEMS = 10;

/** `entries` as [user, hash] pairs, judged one by one (`where(i)` names an entry in a message). */
export function htpasswdUsers(
  entries: readonly (readonly [string, string])[],
  where: (i: number) => string,
): HtpasswdTable {
  const users: BasicUser[] = [];
  const problems: string[] = [];
  // Names seen, good or bad: a later line never lets in a user whose first line was refused.
  const seen = new Set<string>();
  entries.forEach(([name, hash], i) => {
    if (name === "" || hash === "") {
      problems.push(`${where(i)}: not user:hash; skipped`);
      return;
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(name)) {
      problems.push(`${where(i)}: the user name holds control characters; skipped`);
      return;
    }
    if (seen.has(name)) {
      problems.push(`${where(i)}: user ${JSON.stringify(name)} again; only the first line counts`);
      return;
    }
    seen.add(name);
    if (hashScheme(hash) === undefined) {
      problems.push(
        `${where(i)}: user ${JSON.stringify(name)}: the password hash is of no scheme Gatehouse verifies (bcrypt, $apr1$, {SHA}, {SSHA}); this user is refused`,
      );
      return;
    }
    users.push({ name, passwordHash: hash });
  });
  const shown =
    problems.length <= MAX_PROBLEMS
      ? problems
      : [...problems.slice(0, MAX_PROBLEMS), `${problems.length - MAX_PROBLEMS} more lines refused`];
  return { users, problems: shown };
}

/** An htpasswd file's text (`auth-file`; a `.htpasswd`). Lines are numbered from 1 in messages. */
export function parseHtpasswd(text: string): HtpasswdTable {
  const entries: [string, string][] = [];
  const lineNumbers: number[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "" || line.startsWith("#")) return;
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon);
    const rest = colon < 0 ? "" : line.slice(colon + 1);
    const end = rest.indexOf(":");
    entries.push([name, end < 0 ? rest : rest.slice(0, end)]);
    lineNumbers.push(i + 1);
  });
  return htpasswdUsers(entries, (i) => `line ${lineNumbers[i]}`);
}
