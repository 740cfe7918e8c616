/**
 * Basic authentication and API keys for the enforcer (enforce.ts calls `check` before answering that a
 * credential is missing). Each user table and key set is compiled once per content (a model update with
 * the same Secret keeps its cache; a rotated one starts a new table, so an old password stops working at
 * once). A cached result answers synchronously; a bcrypt hash is verified on the thread pool through the
 * gate (at most a few at once, a short queue, then 503), and identical verifications in flight share one.
 *
 * Only what cost a bcrypt verification is cached, and successes and refusals in separate bounded caches:
 * a flood of wrong credentials can fill the refusal cache but never evicts a user who got in (who would
 * then need bcrypt again, through a gate the flood holds). Fast-hash results that fail and unknown users
 * of a table without bcrypt are not cached: a map lookup or an MD5/SHA-1 costs less than the cache would.
 *
 * An unknown user of a table with bcrypt entries is verified against a dummy hash of the first bcrypt
 * entry's cost, through the same gate, and that refusal is cached like a wrong password: otherwise an
 * instant 401 versus one after bcrypt tells which user names exist (nginx answers an unknown user at
 * once). The price: a client who knows no user name can fill the gate with random names (503 for
 * uncached users, as one who knows a single name already could with random passwords); users already
 * in stay answered from the success cache, and the gate still caps the bcrypt work at `running`.
 * Passwords and names are compared as bytes, as nginx does (a Latin-1 password is not UTF-8).
 */
import { timingSafeEqual } from "node:crypto";
import type { APIKeyAuth, BasicAuth, RouteAuth } from "../../model/index.ts";
import { type Identity, namedIdentity } from "../identity.ts";
import {
  type AuthFailureReason,
  apiKeyChallenge,
  basicChallenge,
  bearerChallenge,
  credentialsRequired,
  verificationBusy,
} from "../responses.ts";
import type { HeaderReader } from "../token-source.ts";
import { CredentialCache, type CredentialEntry, credentialKey } from "./credential-cache.ts";
import { isSlowHash, verifyPassword } from "./password-hash.ts";
import { VerifyGate } from "./verify-gate.ts";

export type CredentialResult =
  | {
      readonly ok: true;
      readonly identity: Identity;
      readonly entry: CredentialEntry;
      /** Query parameters to take out of the query sent upstream: every key source of `sanitize`. */
      readonly strip?: readonly string[];
    }
  | { readonly ok: false; readonly reason: AuthFailureReason; readonly busy?: true };

/**
 * bcrypt verifications at once: half the cores (at least one), so a flood of wrong passwords leaves the
 * event loop a core (measured: 2 at once on 2 cores cut a valid user's req/s by two thirds, bench guards).
 */
const defaultRunning = Math.max(1, Math.floor(navigator.hardwareConcurrency / 2));

/** Longest `Authorization: Basic` value read; longer ones are refused unread. */
const MAX_BASIC_LENGTH = 4096;
/** Longest API key read. */
const MAX_KEY_LENGTH = 4096;

interface CompiledBasic {
  /** By the user name's UTF-8 bytes as a Latin-1 string (how `basicCredentials` reads the header). */
  readonly users: ReadonlyMap<string, { readonly name: string; readonly hash: string }>;
  /** A bcrypt hash no password matches, of the first bcrypt entry's cost (unknown users); none: no bcrypt. */
  readonly dummy: string | undefined;
  readonly valid: CredentialCache;
  readonly refused: CredentialCache;
  readonly pending: Map<string, Promise<CredentialResult>>;
}

interface CompiledKeys {
  /** SHA-256 digest (base64) → the key's digest bytes and entry (its identity never changes). */
  readonly byDigest: ReadonlyMap<string, { readonly digest: Buffer; readonly entry: CredentialEntry }>;
}

export interface CredentialCheckOptions {
  /** bcrypt verifications at once (default half the cores, at least 1) and queued beyond that (default 16). */
  readonly verifyRunning?: number;
  readonly verifyWaiting?: number;
  /** Successes kept per user table, and as many refusals (default 10,000 each). */
  readonly cacheEntries?: number;
}

const INVALID: CredentialResult = Object.freeze({ ok: false, reason: "invalid_credentials" });
const BUSY: CredentialResult = Object.freeze({ ok: false, reason: "verify_busy", busy: true });

export class CredentialChecks {
  private basics = new WeakMap<BasicAuth, CompiledBasic>();
  private keySets = new WeakMap<APIKeyAuth, CompiledKeys>();
  private basicByContent = new Map<string, CompiledBasic>();
  private readonly gate: VerifyGate;

  constructor(private readonly opts: CredentialCheckOptions = {}) {
    this.gate = new VerifyGate(opts.verifyRunning ?? defaultRunning, opts.verifyWaiting ?? 16);
  }

  /** Verifications running and queued (tests, metrics). */
  get load(): { running: number; waiting: number } {
    return this.gate.load;
  }

  /** Keeps the compiled tables `auths` use, drops the rest (called with every model). */
  retain(auths: Iterable<RouteAuth>): void {
    const kept = new Map<string, CompiledBasic>();
    this.basics = new WeakMap();
    this.keySets = new WeakMap();
    for (const a of auths) {
      if (a.basic === undefined) continue;
      const key = contentKey(a.basic);
      const c = this.basicByContent.get(key);
      if (c !== undefined) kept.set(key, c);
    }
    this.basicByContent = kept;
  }

  /**
   * The credential the request carries for `auth`'s basic or API-key method, checked; undefined when it
   * carries none (the caller then answers that one is missing).
   */
  check(
    auth: RouteAuth,
    headers: HeaderReader,
    query: string,
  ): CredentialResult | Promise<CredentialResult> | undefined {
    if (auth.basic !== undefined) {
      const value = headers.get("authorization");
      if (value !== null && /^basic(\s|$)/i.test(value)) return this.basic(auth.basic, value);
    }
    if (auth.apiKeys !== undefined) {
      const found = apiKeyOf(auth.apiKeys, headers, query);
      if (found !== undefined) {
        const r = this.apiKey(auth.apiKeys, found.key);
        if (!r.ok || !auth.apiKeys.sanitize) return r;
        const strip = auth.apiKeys.sources.flatMap((s) => (s.type === "Header" ? [] : [s.name]));
        return strip.length === 0 ? r : { ...r, strip };
      }
    }
    return undefined;
  }

  private basic(basic: BasicAuth, header: string): CredentialResult | Promise<CredentialResult> {
    const creds = header.length > MAX_BASIC_LENGTH ? undefined : basicCredentials(header);
    if (creds === undefined) return INVALID;
    const c = this.compiledBasic(basic);
    const key = credentialKey(creds.user, creds.password);
    const now = Date.now();
    const hit = c.valid.get(key, now) ?? c.refused.get(key, now);
    if (hit !== undefined) return resultOf(hit);
    const password = Buffer.from(creds.password, "latin1");
    const user = c.users.get(creds.user);
    if (user === undefined)
      return c.dummy === undefined ? INVALID : this.slowCheck(c, key, c.dummy, password, undefined);
    if (isSlowHash(user.hash)) return this.slowCheck(c, key, user.hash, password, user.name);
    if (verifyPassword(user.hash, password) !== true) return INVALID;
    return resultOf(c.valid.set(key, namedIdentity(user.name, "basic"), now));
  }

  /** A bcrypt verification through the gate; `name` undefined: a dummy one, always refused. */
  private slowCheck(
    c: CompiledBasic,
    key: string,
    hash: string,
    password: Buffer,
    name: string | undefined,
  ): CredentialResult | Promise<CredentialResult> {
    const pending = c.pending.get(key);
    if (pending !== undefined) return pending;
    const run = this.gate.run(async () => verifyPassword(hash, password));
    if (run === undefined) return BUSY;
    const p = run
      .then(
        (v) =>
          resultOf(
            v && name !== undefined
              ? c.valid.set(key, namedIdentity(name, "basic"), Date.now())
              : c.refused.set(key, undefined, Date.now()),
          ),
        () => INVALID,
      )
      .finally(() => c.pending.delete(key));
    c.pending.set(key, p);
    return p;
  }

  private apiKey(keys: APIKeyAuth, key: string): CredentialResult {
    if (key.length > MAX_KEY_LENGTH) return INVALID;
    const compiled = this.compiledKeys(keys);
    const digest = keyDigest(key);
    const found = compiled.byDigest.get(digest);
    // The map is keyed by the digest, so its lookup times nothing of the key itself; the constant-time
    // comparison after it confirms what was found.
    if (found === undefined || found.entry.identity === undefined) return INVALID;
    const presented = Buffer.from(digest, "base64");
    if (presented.length !== found.digest.length || !timingSafeEqual(presented, found.digest)) return INVALID;
    return { ok: true, identity: found.entry.identity, entry: found.entry };
  }

  private compiledBasic(basic: BasicAuth): CompiledBasic {
    let c = this.basics.get(basic);
    if (c !== undefined) return c;
    const key = contentKey(basic);
    c = this.basicByContent.get(key);
    if (c === undefined) {
      const users = new Map<string, { name: string; hash: string }>();
      let dummy: string | undefined;
      for (const u of basic.users) {
        const bytes = Buffer.from(u.name, "utf8").toString("latin1");
        if (!users.has(bytes)) users.set(bytes, { name: u.name, hash: u.passwordHash });
        if (dummy === undefined && isSlowHash(u.passwordHash)) dummy = dummyHash(u.passwordHash);
      }
      const entries = this.opts.cacheEntries;
      c = {
        users,
        dummy,
        valid: new CredentialCache(entries),
        refused: new CredentialCache(entries),
        pending: new Map(),
      };
      this.basicByContent.set(key, c);
    }
    this.basics.set(basic, c);
    return c;
  }

  private compiledKeys(keys: APIKeyAuth): CompiledKeys {
    let c = this.keySets.get(keys);
    if (c !== undefined) return c;
    const byDigest = new Map<string, { digest: Buffer; entry: CredentialEntry }>();
    for (const k of keys.keys)
      if (!byDigest.has(k.keyDigest))
        byDigest.set(k.keyDigest, {
          digest: Buffer.from(k.keyDigest, "base64"),
          entry: {
            identity: namedIdentity(k.name, "apiKey"),
            untilMs: Number.POSITIVE_INFINITY,
            derived: new WeakMap(),
          },
        });
    c = { byDigest };
    this.keySets.set(keys, c);
    return c;
  }
}

function resultOf(entry: CredentialEntry): CredentialResult {
  return entry.identity === undefined ? INVALID : { ok: true, identity: entry.identity, entry };
}

function contentKey(basic: BasicAuth): string {
  return JSON.stringify(basic.users);
}

/** SHA-256 of an API key, base64: what the model holds (translate computes it the same way). */
export function keyDigest(key: string): string {
  return Bun.CryptoHasher.hash("sha256", key, "base64") as string;
}

/**
 * User and password of an `Authorization: Basic` value (RFC 7617: base64 of `user:password`), each as its
 * bytes in a Latin-1 string: nginx compares bytes, and a client's charset need not be UTF-8.
 */
export function basicCredentials(header: string): { user: string; password: string } | undefined {
  const token = header.slice(5).trim();
  if (token === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return undefined;
  const text = Buffer.from(token, "base64").toString("latin1");
  const colon = text.indexOf(":");
  if (colon <= 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The key from the first source the request carries (and the query parameter it came in), or undefined. */
function apiKeyOf(
  keys: APIKeyAuth,
  headers: HeaderReader,
  query: string,
): { key: string; param?: string } | undefined {
  for (const s of keys.sources) {
    if (s.type === "Header") {
      const v = headers.get(s.name)?.trim();
      if (v) return { key: v };
    } else if (query !== "") {
      const v = new URLSearchParams(query).get(s.name);
      if (v) return { key: v, param: s.name };
    }
  }
  return undefined;
}

/**
 * `query` (raw, no `?`) without the parameters named `name` (compared decoded, as URLSearchParams reads
 * them), as the target's query: `?…`, or "" when nothing is left. The other parameters keep their bytes.
 */
export function withoutParam(query: string, names: string | readonly string[]): string {
  const drop = typeof names === "string" ? [names] : names;
  const kept = query.split("&").filter((part) => {
    const eq = part.indexOf("=");
    const raw = (eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, " ");
    try {
      return !drop.includes(decodeURIComponent(raw));
    } catch {
      return true;
    }
  });
  return kept.length === 0 || (kept.length === 1 && kept[0] === "") ? "" : `?${kept.join("&")}`;
}

/** The answer to a missing credential (no `c`) or a refused one: 401 with the route's challenges, or 503. */
export function credentialRefusal(auth: RouteAuth, c?: CredentialResult & { ok: false }): Response {
  return c?.busy ? verificationBusy() : credentialsRequired(challengesOf(auth));
}

/** The challenges of a 401 on a route with basic auth or API keys: one per method it accepts. */
export function challengesOf(auth: RouteAuth): string[] {
  const policy = `${auth.policy.namespace}/${auth.policy.name}`;
  const out: string[] = [];
  if (auth.jwt !== undefined) out.push(bearerChallenge(policy));
  if (auth.basic !== undefined) out.push(basicChallenge(auth.basic.realm));
  const first = auth.apiKeys?.sources[0];
  if (first !== undefined)
    out.push(apiKeyChallenge(policy, `${first.type === "Header" ? "header" : "query"}:${first.name}`));
  return out;
}

/**
 * Headers the route's basic and API-key settings edit on every admitted request: the user-name and key-name
 * headers are always removed (a client cannot supply them) and set from the identity that got in; the
 * credential itself is removed when it is what got in (basic: `Authorization`, as ingress-nginx clears it)
 * or, with `sanitize`, whenever a key header is present.
 */
export function credentialHeaders(
  auth: RouteAuth,
  identity: Identity,
): { remove: string[]; set: [string, string][] } {
  const remove: string[] = [];
  const set: [string, string][] = [];
  const basic = auth.basic;
  if (basic !== undefined) {
    if (basic.usernameHeader !== undefined) remove.push(basic.usernameHeader);
    if (identity.via === "address") remove.push("authorization");
    else if (identity.via === "basic") {
      remove.push("authorization");
      if (basic.usernameHeader !== undefined) set.push([basic.usernameHeader, identity.sub]);
    }
  }
  const keys = auth.apiKeys;
  if (keys !== undefined) {
    remove.push(keys.clientIDHeader);
    if (keys.sanitize) for (const s of keys.sources) if (s.type === "Header") remove.push(s.name);
    if (identity.via === "apiKey") set.push([keys.clientIDHeader, identity.sub]);
  }
  return { remove, set };
}

/**
 * The hash an unknown user is verified against: `$2y$10$` (the cost of `bcrypt`, a table's first bcrypt
 * hash) and 53 characters of salt and digest. It must be one Bun verifies at that cost and that matches
 * nothing: a hash Bun refused at once would answer unknown users faster than known ones.
 */
export function dummyHash(bcrypt: string): string {
  return `${bcrypt.slice(0, 7)}${".".repeat(53)}`;
}
