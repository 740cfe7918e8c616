import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import type { RouteAuth } from "../../model/index.ts";
import { AuthEnforcer } from "../enforce.ts";
import type { AuthOutcome } from "../outcome.ts";
import {
  CredentialChecks,
  type CredentialResult,
  dummyHash,
  keyDigest,
  withoutParam,
} from "./credential-check.ts";

const sha = (pw: string | Buffer) => `{SHA}${createHash("sha1").update(pw).digest("base64")}`;

const php = "$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq"; // "rasmuslerdorf"

function routeAuth(extra: Partial<RouteAuth>): RouteAuth {
  return {
    policy: { kind: "AuthPolicy", namespace: "ns", name: "p" },
    authorization: { requiredScopes: [], requiredClaims: [] },
    claimToHeaders: [],
    ...extra,
  };
}

const basic = routeAuth({
  basic: {
    realm: "Staff only",
    users: [
      { name: "alice", passwordHash: "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=" }, // "password"
      { name: "rasmus", passwordHash: php },
      { name: "bob", passwordHash: "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/" }, // "secret"
    ],
    usernameHeader: "x-user",
  },
});

const keys = routeAuth({
  apiKeys: {
    sources: [
      { type: "Header", name: "x-api-key" },
      { type: "QueryParameter", name: "api_key" },
    ],
    keys: [
      { name: "billing", keyDigest: keyDigest("k-billing-123") },
      { name: "reports", keyDigest: keyDigest("k-reports-456") },
    ],
    clientIDHeader: "x-api-key-name",
    sanitize: true,
  },
});

const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n] ?? null });
const basicHeader = (user: string, pw: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`,
});

function refused(o: AuthOutcome): Response {
  if (o.ok) throw new Error("admitted");
  return o.response;
}

describe("basic authentication", () => {
  const auth = new AuthEnforcer();

  test("a missing or wrong credential gets 401 with a Basic challenge naming the realm", async () => {
    for (const h of [
      {},
      basicHeader("alice", "nope"),
      basicHeader("carol", "password"),
      { authorization: "Basic !!" },
    ]) {
      const r = refused(await auth.checkToken(basic, headers(h), ""));
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Basic realm="Staff only", charset="UTF-8"');
    }
  });

  test("each scheme admits its user; the user goes upstream, the credential does not", async () => {
    for (const [user, pw] of [
      ["alice", "password"],
      ["bob", "secret"],
      ["rasmus", "rasmuslerdorf"],
    ] as const) {
      const o = await auth.checkToken(basic, headers(basicHeader(user, pw)), "");
      if (!o.ok) throw new Error(`${user} refused`);
      expect(o.identity.sub).toBe(user);
      expect(o.identity.via).toBe("basic");
      expect(o.removeHeaders).toEqual(["x-user", "authorization"]);
      expect(o.setHeaders).toEqual([["x-user", user]]);
    }
  });

  test("bcrypt runs once per credential: a repeat is answered synchronously from the cache", async () => {
    const fresh = new AuthEnforcer();
    const first = fresh.checkToken(basic, headers(basicHeader("rasmus", "rasmuslerdorf")), "");
    expect(first).toBeInstanceOf(Promise);
    const a = await first;
    const again = fresh.checkToken(basic, headers(basicHeader("rasmus", "rasmuslerdorf")), "");
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toBe(a);
    // A wrong password is cached too (a repeated guess costs no bcrypt).
    await fresh.checkToken(basic, headers(basicHeader("rasmus", "guess")), "");
    expect(fresh.checkToken(basic, headers(basicHeader("rasmus", "guess")), "")).not.toBeInstanceOf(Promise);
  });

  test("over the cap, a new verification gets 503 with Retry-After; the cached user is still served", async () => {
    const capped = new AuthEnforcer({ verifyRunning: 1, verifyWaiting: 1 });
    const good = headers(basicHeader("rasmus", "rasmuslerdorf"));
    await capped.checkToken(basic, good, "");
    const flood = [0, 1, 2, 3].map((i) =>
      capped.checkToken(basic, headers(basicHeader("rasmus", `wrong${i}`)), ""),
    );
    expect(capped.credentials.load).toEqual({ running: 1, waiting: 1 });
    const served = capped.checkToken(basic, good, "");
    expect(served).not.toBeInstanceOf(Promise);
    expect((served as AuthOutcome).ok).toBe(true);
    const answers = await Promise.all(flood);
    expect(answers.map((o) => (o.ok ? 200 : o.response.status))).toEqual([401, 401, 503, 503]);
    expect(refused(answers[2] as AuthOutcome).headers.get("retry-after")).toBe("1");
  });

  test("a changed user table (rotated Secret) stops an old password at once", async () => {
    const e = new AuthEnforcer();
    expect((await e.checkToken(basic, headers(basicHeader("alice", "password")), "")).ok).toBe(true);
    const rotated = routeAuth({
      basic: {
        realm: "Staff only",
        users: [{ name: "alice", passwordHash: "{SHA}87u9ZqY9S/F0eUBXjsPQEDUw4h0=" }],
      },
    });
    expect((await e.checkToken(rotated, headers(basicHeader("alice", "password")), "")).ok).toBe(false);
    expect((await e.checkToken(rotated, headers(basicHeader("alice", "hunter2")), "")).ok).toBe(true);
  });
});

describe("API keys", () => {
  const auth = new AuthEnforcer();

  test("from the header or the query parameter; the key's name goes upstream, the key header does not", () => {
    for (const [h, q] of [
      [{ "x-api-key": "k-billing-123" }, ""],
      [{}, "a=1&api_key=k-billing-123"],
    ] as const) {
      const o = auth.checkToken(keys, headers(h), q) as AuthOutcome;
      if (!o.ok) throw new Error("refused");
      expect(o.identity).toMatchObject({ sub: "billing", via: "apiKey" });
      expect(o.removeHeaders).toEqual(["x-api-key-name", "x-api-key"]);
      expect(o.setHeaders).toEqual([["x-api-key-name", "billing"]]);
    }
  });

  test("with sanitize every configured query source leaves the query sent upstream, whichever source got in", () => {
    const o = auth.checkToken(keys, headers({}), "a=1&api_key=k-billing-123&b=%20x") as AuthOutcome;
    expect(o.ok && o.query).toBe("?a=1&b=%20x");
    // The key got in by header; a second key in the query parameter must not reach the upstream either.
    const h = auth.checkToken(keys, headers({ "x-api-key": "k-billing-123" }), "api_key=k-reports-456&c=3");
    expect((h as AuthOutcome).ok && (h as AuthOutcome & { ok: true }).query).toBe("?c=3");
    expect((h as AuthOutcome).ok && (h as AuthOutcome & { ok: true }).removeHeaders).toContain("x-api-key");
    const kept = {
      ...keys,
      apiKeys: { ...(keys.apiKeys as NonNullable<RouteAuth["apiKeys"]>), sanitize: false },
    };
    const k = auth.checkToken(kept, headers({}), "api_key=k-billing-123") as AuthOutcome;
    expect(k.ok && k.query).toBeUndefined();
  });

  test("withoutParam drops every parameter of the name, compared decoded, and keeps the others' bytes", () => {
    expect(withoutParam("api_key=1", "api_key")).toBe("");
    expect(withoutParam("x=%2F&api%5Fkey=1&api_key=2&y", "api_key")).toBe("?x=%2F&y");
    expect(withoutParam("a=1&bad=%E0%A4%A", "api_key")).toBe("?a=1&bad=%E0%A4%A");
    expect(withoutParam("api+key=1", "api key")).toBe("");
    expect(withoutParam("a=1&k1=x&b=2&k2=y", ["k1", "k2"])).toBe("?a=1&b=2");
  });

  test("an unknown or missing key gets 401", () => {
    for (const [h, q] of [
      [{ "x-api-key": "k-billing-124" }, ""],
      [{}, "api_key="],
      [{}, ""],
    ] as const) {
      const r = refused(auth.checkToken(keys, headers(h), q) as AuthOutcome);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('ApiKey realm="ns/p", in="header:x-api-key"');
    }
  });
});

describe("the credential cache", () => {
  test("valid entries are renewed while used and outlive unused ones; refusals expire; the oldest go when full", async () => {
    const { CredentialCache } = await import("./credential-cache.ts");
    const { namedIdentity } = await import("../identity.ts");
    const c = new CredentialCache(2, 1000, 100);
    const alice = c.set("a", namedIdentity("alice", "basic"), 0);
    c.set("wrong", undefined, 0);
    expect(c.get("wrong", 99)).toBeDefined();
    expect(c.get("wrong", 100)).toBeUndefined();
    expect(c.get("a", 600)).toBe(alice); // past half: renewed to 1600
    expect(c.get("a", 1500)).toBe(alice);
    c.set("b", namedIdentity("bob", "basic"), 1500);
    c.set("c", namedIdentity("carol", "basic"), 1500); // full: the oldest entry goes
    expect(c.size).toBe(2);
    expect(c.get("c", 1500)).toBeDefined();
  });
});

describe("basic authentication under abuse", () => {
  test("a flood of unknown users and wrong passwords never evicts a user who got in", async () => {
    const checks = new CredentialChecks({ cacheEntries: 4, verifyRunning: 1, verifyWaiting: 16 });
    const good = headers(basicHeader("rasmus", "rasmuslerdorf"));
    const first = checks.check(basic, good, "");
    expect(first).toBeInstanceOf(Promise);
    expect((await first)?.ok).toBe(true);
    const pending: unknown[] = [];
    for (let i = 0; i < 20_000; i++)
      pending.push(checks.check(basic, headers(basicHeader(`u${i}`, "x")), ""));
    // Wrong passwords of real users too: fast-hash ones (never cached) and bcrypt ones (refusal cache).
    for (let i = 0; i < 8; i++) pending.push(checks.check(basic, headers(basicHeader("alice", `w${i}`)), ""));
    await Promise.all(pending);
    for (let i = 0; i < 8; i++) await checks.check(basic, headers(basicHeader("rasmus", `w${i}`)), "");
    const again = checks.check(basic, good, "");
    expect(again).not.toBeInstanceOf(Promise); // a cache hit: no bcrypt
    expect((again as CredentialResult).ok).toBe(true);
    expect(checks.load).toEqual({ running: 0, waiting: 0 });
  });

  test("an unknown user costs a bcrypt verification like a known one (no timing oracle), through the gate", async () => {
    const checks = new CredentialChecks({ verifyRunning: 1, verifyWaiting: 0 });
    const unknown = headers(basicHeader("mallory", "x"));
    const r = checks.check(basic, unknown, "");
    expect(r).toBeInstanceOf(Promise);
    expect(checks.load.running).toBe(1);
    // The gate is full: an unknown user is turned away like everyone (503), not answered at once with 401.
    expect(checks.check(basic, headers(basicHeader("eve", "x")), "")).toMatchObject({
      ok: false,
      busy: true,
    });
    expect(await r).toMatchObject({ ok: false, reason: "invalid_credentials" });
    // Repeated, it is answered from the refusal cache, as a repeated wrong password of a known user is.
    expect(checks.check(basic, unknown, "")).toMatchObject({ ok: false, reason: "invalid_credentials" });
    // A table without bcrypt answers an unknown user at once (its hashes cost microseconds).
    const fast = routeAuth({
      basic: { realm: "r", users: [{ name: "alice", passwordHash: sha("password") }] },
    });
    expect(checks.check(fast, unknown, "")).toMatchObject({ ok: false, reason: "invalid_credentials" });
  });

  test("the dummy hash is a bcrypt hash Bun verifies at the table's cost, and it matches nothing", async () => {
    const dummy = dummyHash(php);
    expect(dummy).toMatch(/^\$2y\$07\$[./A-Za-z0-9]{53}$/);
    // Straight to Bun (verifyPassword turns a refused hash into a quick false, which would hide it).
    const timed = async (hash: string) => {
      const start = performance.now();
      const matched = await Bun.password.verify("rasmuslerdorf", hash);
      return { matched, ms: performance.now() - start };
    };
    const fake = await timed(dummy);
    expect((await timed(php)).matched).toBe(true);
    expect(fake.matched).toBe(false);
    // Cost 7: 128 rounds, several milliseconds; a refused encoding answers in well under one.
    expect(fake.ms).toBeGreaterThan(1);
  });

  test("passwords and names are compared as bytes: a Latin-1 password matches its hash", () => {
    const checks = new CredentialChecks();
    const latin1 = Buffer.from("p\xe4sswort", "latin1");
    const table = routeAuth({
      basic: {
        realm: "r",
        users: [
          { name: "carol", passwordHash: sha(latin1) },
          { name: "j\u00f6rg", passwordHash: sha("gr\u00fc\u00dfe") },
        ],
      },
    });
    const raw = (user: Buffer, pw: Buffer) =>
      headers({ authorization: `Basic ${Buffer.concat([user, Buffer.from(":"), pw]).toString("base64")}` });
    const ok = checks.check(table, raw(Buffer.from("carol"), latin1), "") as CredentialResult;
    expect(ok.ok && ok.identity.sub).toBe("carol");
    // The UTF-8 spelling of the same text is other bytes: refused.
    expect(
      (checks.check(table, raw(Buffer.from("carol"), Buffer.from("p\u00e4sswort")), "") as CredentialResult)
        .ok,
    ).toBe(false);
    const u = checks.check(
      table,
      raw(Buffer.from("j\u00f6rg"), Buffer.from("gr\u00fc\u00dfe")),
      "",
    ) as CredentialResult;
    expect(u.ok && u.identity.sub).toBe("j\u00f6rg");
  });
});
