/**
 * Basic-auth user tables and API keys read from Secrets, for AuthPolicies (policies/auth-policy-credentials.ts)
 * and ingress-nginx's `auth-secret` (ingress/access/authentication.ts) alike. What makes a Secret unusable
 * goes to `errors` (the caller fails closed); a bad line or key that leaves the others usable goes to
 * `warnings` (that user or key is refused, the others get in). Messages never quote a hash or a key.
 */

import { htpasswdUsers, parseHtpasswd } from "../../model/htpasswd-syntax.ts";
import type { APIKey, BasicUser } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import { compareStrings } from "./sort.ts";

/** `<ns>/<name>` → Secret. */
export type SecretIndex = ReadonlyMap<string, Secret>;

/** How the Secret holds the users: one htpasswd text under a key, or one entry per user (ingress-nginx). */
export type UserTableFormat = "File" | "Map";

/** A Secret's entries as text (`stringData` over `data`, as the API server merges them); undefined: none. */
function secretEntries(secret: Secret): Map<string, string> | undefined {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(secret.data ?? {})) {
    if (typeof v !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) return undefined;
    out.set(k, Buffer.from(v, "base64").toString("utf8"));
  }
  for (const [k, v] of Object.entries(secret.stringData ?? {})) if (typeof v === "string") out.set(k, v);
  return out;
}

function found(
  secrets: SecretIndex,
  key: string,
  field: string,
  errors: string[],
): Map<string, string> | undefined {
  const secret = secrets.get(key);
  if (secret === undefined) {
    errors.push(`${field}: Secret ${key} not found`);
    return undefined;
  }
  const entries = secretEntries(secret);
  if (entries === undefined) errors.push(`${field}: Secret ${key}: data is not base64`);
  return entries;
}

/**
 * The users of Secret `key` (`<ns>/<name>`): the htpasswd text under `dataKey` (File), or every entry as
 * user → hash (Map). Undefined (with an error) when the Secret is missing or holds no usable user.
 */
export function basicUsers(
  secrets: SecretIndex,
  key: string,
  format: UserTableFormat,
  dataKey: string,
  field: string,
  errors: string[],
  warnings: string[],
): BasicUser[] | undefined {
  const entries = found(secrets, key, field, errors);
  if (entries === undefined) return undefined;
  let table: ReturnType<typeof htpasswdUsers>;
  if (format === "File") {
    const text = entries.get(dataKey);
    if (text === undefined) {
      errors.push(`${field}: Secret ${key} has no key "${dataKey}"`);
      return undefined;
    }
    table = parseHtpasswd(text);
  } else {
    const pairs = [...entries].sort(([a], [b]) => compareStrings(a, b));
    table = htpasswdUsers(
      pairs.map(([user, hash]) => [user, hash.trim()] as const),
      (i) => `key ${JSON.stringify(pairs[i]?.[0])}`,
    );
  }
  for (const p of table.problems) warnings.push(`${field}: Secret ${key}: ${p}`);
  if (table.users.length === 0) {
    errors.push(`${field}: Secret ${key} holds no user Gatehouse can verify`);
    return undefined;
  }
  return [...table.users];
}

/**
 * The API keys of Secrets `keys` (`<ns>/<name>` each): every entry is one key, its data key the client's
 * name, its value (trimmed) the key. The model keeps only each key's SHA-256. A key two names share is
 * refused for both (which client it is cannot be told); an empty one is skipped.
 */
export function apiKeys(
  secrets: SecretIndex,
  keys: readonly string[],
  field: string,
  errors: string[],
  warnings: string[],
): APIKey[] {
  const byDigest = new Map<string, APIKey>();
  const shared = new Set<string>();
  const names = new Set<string>();
  keys.forEach((key, i) => {
    const entries = found(secrets, key, `${field}[${i}]`, errors);
    if (entries === undefined) return;
    for (const [name, raw] of [...entries].sort(([a], [b]) => compareStrings(a, b))) {
      const value = raw.trim();
      if (value === "") {
        warnings.push(`${field}[${i}]: Secret ${key}: key "${name}" is empty; skipped`);
        continue;
      }
      if (names.has(name)) {
        warnings.push(
          `${field}[${i}]: Secret ${key}: the name "${name}" is taken by an earlier Secret; skipped`,
        );
        continue;
      }
      names.add(name);
      const digest = Bun.CryptoHasher.hash("sha256", value, "base64") as string;
      const other = byDigest.get(digest);
      if (other !== undefined) {
        warnings.push(`${field}: "${other.name}" and "${name}" hold the same key; it is refused for both`);
        shared.add(digest);
        continue;
      }
      byDigest.set(digest, { name, keyDigest: digest });
    }
  });
  const out = [...byDigest.values()].filter((k) => !shared.has(k.keyDigest));
  if (out.length === 0 && errors.length === 0) errors.push(`${field}: the Secrets hold no usable key`);
  return out;
}
