/**
 * The attack matrix against real keys: every forged or broken token is refused with a fixed reason, and
 * real RS256, ES256 and EdDSA tokens pass.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { exportSPKI } from "jose";
import type { JWTProvider } from "../model/index.ts";
import { type KeyLookup, staticKeys } from "./jwks.ts";
import { maxTokenLength, verifyJWT } from "./jwt.ts";
import { JWKSServer, signToken, type TestKey, testKey } from "./testing/keys.ts";

const issuer = "https://issuer.test";
const provider: JWTProvider = {
  name: "test",
  issuer,
  audiences: ["api"],
  audienceCheck: true,
  keys: { type: "Inline", jwks: "" },
  algorithms: ["RS256", "ES256", "EdDSA"],
  clockSkewSeconds: 30,
};
const now = () => Math.floor(Date.now() / 1000);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

let rsa: TestKey;
let ec: TestKey;
let ed: TestKey;
let keys: KeyLookup;
let attacker: JWKSServer;

beforeAll(async () => {
  [rsa, ec, ed] = await Promise.all([
    testKey("RS256", "rsa-1"),
    testKey("ES256", "ec-1"),
    testKey("EdDSA", "ed-1"),
  ]);
  keys = staticKeys(JSON.stringify({ keys: [rsa.publicJwk, ec.publicJwk, ed.publicJwk] })) as KeyLookup;
  attacker = new JWKSServer([await testKey("RS256", "evil")]);
});
afterAll(() => attacker.stop());

const good = { iss: issuer, aud: "api", sub: "alice", scope: "read write" };

describe("valid tokens", () => {
  for (const which of ["rsa", "ec", "ed"] as const) {
    test(`${which} signature verifies and builds a frozen identity`, async () => {
      const key = { rsa, ec, ed }[which];
      const r = await verifyJWT(await signToken(key, good), provider, keys);
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      expect(r.identity.sub).toBe("alice");
      expect(r.identity.scopes).toEqual(["read", "write"]);
      expect(Object.isFrozen(r.identity) && Object.isFrozen(r.identity.claims)).toBe(true);
    });
  }

  test("exp within the 30 s clock skew still passes; beyond it fails as expired", async () => {
    const inSkew = await verifyJWT(await signToken(ec, { ...good, exp: now() - 20 }), provider, keys);
    expect(inSkew.ok).toBe(true);
    const beyond = await verifyJWT(await signToken(ec, { ...good, exp: now() - 40 }), provider, keys);
    expect(beyond).toMatchObject({ ok: false, reason: "expired" });
  });

  test("audience check off accepts any aud", async () => {
    const off = { ...provider, audiences: [], audienceCheck: false };
    expect((await verifyJWT(await signToken(ec, { ...good, aud: "other" }), off, keys)).ok).toBe(true);
  });
});

describe("attack matrix: each refused", () => {
  const refused = async (token: string, reason = "invalid_token", description?: string) => {
    const r = await verifyJWT(token, provider, keys);
    expect(r).toMatchObject({ ok: false, reason, ...(description ? { description } : {}) });
  };

  test("alg none", async () => {
    await refused(`${b64({ alg: "none", typ: "JWT" })}.${b64({ ...good, exp: now() + 60 })}.`);
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64({ ...good, exp: now() + 60 })}.AAAA`;
    await refused(none, "invalid_token", "algorithm not accepted");
  });

  test("HS256 signed with the RSA public key as the HMAC secret", async () => {
    const pem = await exportSPKI(rsa.publicKey);
    const head = `${b64({ alg: "HS256", typ: "JWT", kid: "rsa-1" })}.${b64({ ...good, exp: now() + 60 })}`;
    const sig = createHmac("sha256", pem).update(head).digest("base64url");
    await refused(`${head}.${sig}`, "invalid_token", "algorithm not accepted");
    // Even a provider that (wrongly) listed HS256 finds no symmetric key in a JWKS of public keys.
    const lax = { ...provider, algorithms: ["HS256", "RS256"] };
    expect((await verifyJWT(`${head}.${sig}`, lax, keys)).ok).toBe(false);
  });

  test("missing exp", async () => {
    const { SignJWT } = await import("jose");
    const token = await new SignJWT(good)
      .setProtectedHeader({ alg: "ES256", kid: "ec-1" })
      .sign(ec.privateKey);
    await refused(token, "invalid_token", "exp check failed");
  });

  test("expired", async () => refused(await signToken(rsa, { ...good, exp: now() - 3600 }), "expired"));

  test("nbf in the future (beyond skew)", async () => {
    await refused(await signToken(rsa, { ...good, nbf: now() + 120 }), "invalid_token", "nbf check failed");
  });

  test("wrong iss", async () =>
    refused(
      await signToken(rsa, { ...good, iss: "https://evil.test" }),
      "invalid_token",
      "iss check failed",
    ));
  test("wrong aud", async () =>
    refused(await signToken(rsa, { ...good, aud: "other" }), "invalid_token", "aud check failed"));

  test("unknown kid", async () => {
    const stranger = await testKey("ES256", "who");
    await refused(await signToken(stranger, good), "unknown_key");
  });

  test("a key from the set used under another kid's name does not verify", async () => {
    const stranger = await testKey("ES256", "ec-1");
    await refused(await signToken(stranger, good), "invalid_token", "signature invalid");
  });

  test("token over 8 KB", async () => {
    const big = await signToken(ec, { ...good, pad: "x".repeat(maxTokenLength) });
    expect(big.length).toBeGreaterThan(maxTokenLength);
    await refused(big, "invalid_token", "token too large");
  });

  test("malformed base64 and shapes", async () => {
    const token = await signToken(ec, good);
    const [h, p, s] = token.split(".");
    await refused(`${h}.${p}!.${s}`);
    await refused(`${h}.${p}`);
    await refused(`${h}.${p}.${s}.x.y`);
    await refused(`${Buffer.from("{not json").toString("base64url")}.${p}.${s}`);
    await refused(`${h}.${(p as string).slice(0, -3)}.${s}`);
  });

  test("jku / x5u / jwk headers pointing elsewhere: refused and never fetched", async () => {
    for (const header of [
      { jku: `${attacker.url}/jwks` },
      { x5u: `${attacker.url}/cert.pem` },
      { jwk: rsa.publicJwk },
    ]) {
      const name = Object.keys(header)[0];
      await refused(
        await signToken(rsa, good, header),
        "invalid_token",
        `header parameter ${name} not accepted`,
      );
    }
    expect(attacker.hits.size).toBe(0);
  });

  test("a tampered payload fails the signature", async () => {
    const [h, , s] = (await signToken(ec, good)).split(".");
    await refused(
      `${h}.${b64({ ...good, sub: "root", exp: now() + 60 })}.${s}`,
      "invalid_token",
      "signature invalid",
    );
  });
});
