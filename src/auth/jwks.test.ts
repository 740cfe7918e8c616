/** KeySetFetcher against a real JWKS server on loopback that rotates keys, fails and hangs. */
import { afterEach, describe, expect, test } from "bun:test";
import type { JWTProvider } from "../model/index.ts";
import { KeySetFetcher } from "./jwks.ts";
import { verifyJWT } from "./jwt.ts";
import { JWKSServer, signToken, testKey } from "./testing/keys.ts";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

function setup(
  server: JWKSServer,
  opts: ConstructorParameters<typeof KeySetFetcher>[1] = {},
  discovery = false,
) {
  const f = new KeySetFetcher(
    discovery
      ? { issuer: server.url, discovery: true }
      : { issuer: server.url, jwksUrl: `${server.url}/jwks` },
    { timeoutMs: 300, refreshMs: 60_000, retryMs: 60_000, cooldownMs: 60_000, ...opts },
  );
  cleanup.push(
    () => f.close(),
    () => server.stop(),
  );
  return f;
}

const provider = (issuer: string): JWTProvider => ({
  name: "p",
  issuer,
  audiences: ["api"],
  audienceCheck: true,
  keys: { type: "Discovery" },
  algorithms: ["RS256", "ES256", "EdDSA"],
  clockSkewSeconds: 30,
});

describe("KeySetFetcher", () => {
  test("fetched at start; background refresh picks up a rotated key", async () => {
    const k1 = await testKey("ES256", "k1");
    const k2 = await testKey("EdDSA", "k2");
    const server = new JWKSServer([k1]);
    const f = setup(server, { refreshMs: 150, cooldownMs: 60_000 });
    await f.started;
    expect(f.hasKeys).toBe(true);
    const p = provider(server.url);
    const claims = { iss: server.url, aud: "api", sub: "a" };
    expect((await verifyJWT(await signToken(k1, claims), p, f.getKey)).ok).toBe(true);
    server.setKeys([k2]);
    await Bun.sleep(400);
    expect(server.count("/jwks")).toBeGreaterThanOrEqual(2);
    expect((await verifyJWT(await signToken(k2, claims), p, f.getKey)).ok).toBe(true);
    // k1 rotated out: its tokens no longer verify.
    expect((await verifyJWT(await signToken(k1, claims), p, f.getKey)).ok).toBe(false);
  });

  test("unknown kid refreshes early, at most once per cooldown", async () => {
    const k1 = await testKey("RS256", "k1");
    const k2 = await testKey("RS256", "k2");
    const server = new JWKSServer([k1]);
    const f = setup(server, { cooldownMs: 0 });
    await f.started;
    server.setKeys([k1, k2]);
    const claims = { iss: server.url, aud: "api" };
    // Cooldown 0: the unknown kid triggers a fetch and then verifies.
    expect((await verifyJWT(await signToken(k2, claims), provider(server.url), f.getKey)).ok).toBe(true);
    expect(server.count("/jwks")).toBe(2);

    const server2 = new JWKSServer([k1]);
    const g = setup(server2, { cooldownMs: 60_000 });
    await g.started;
    server2.setKeys([k1, k2]);
    // Just fetched at start, so within the cooldown: no fetch, refused; a flood of unknown kids costs nothing.
    for (let i = 0; i < 20; i++) {
      const r = await verifyJWT(await signToken(k2, claims), provider(server2.url), g.getKey);
      expect(r).toMatchObject({ ok: false, reason: "unknown_key" });
    }
    expect(server2.count("/jwks")).toBe(1);
  });

  test("JWKS down at start: refused with keys_unavailable; recovers on retry", async () => {
    const k1 = await testKey("ES256", "k1");
    const server = new JWKSServer([k1]);
    server.mode = "error";
    const f = setup(server, { retryMs: 100, cooldownMs: 60_000 });
    await f.started;
    expect(f.hasKeys).toBe(false);
    expect(f.lastError).toContain("503");
    const token = await signToken(k1, { iss: server.url, aud: "api" });
    expect(await verifyJWT(token, provider(server.url), f.getKey)).toMatchObject({
      ok: false,
      reason: "keys_unavailable",
    });
    server.mode = "ok";
    await Bun.sleep(300);
    expect((await verifyJWT(token, provider(server.url), f.getKey)).ok).toBe(true);
  });

  test("JWKS down at refresh: the last good key set is kept; new kids are refused", async () => {
    const k1 = await testKey("ES256", "k1");
    const k2 = await testKey("ES256", "k2");
    const server = new JWKSServer([k1]);
    const f = setup(server, { refreshMs: 100, cooldownMs: 0 });
    await f.started;
    server.mode = "error";
    server.setKeys([k2]);
    await Bun.sleep(300);
    expect(server.count("/jwks")).toBeGreaterThanOrEqual(2);
    expect(f.lastError).toContain("503");
    const claims = { iss: server.url, aud: "api" };
    expect((await verifyJWT(await signToken(k1, claims), provider(server.url), f.getKey)).ok).toBe(true);
    expect((await verifyJWT(await signToken(k2, claims), provider(server.url), f.getKey)).ok).toBe(false);
  });

  test("a hanging JWKS endpoint times out quickly", async () => {
    const server = new JWKSServer([]);
    server.mode = "hang";
    const f = setup(server, { timeoutMs: 200 });
    const t0 = performance.now();
    await f.started;
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(f.hasKeys).toBe(false);
  });

  test("discovery: jwks_uri from the issuer's document; a document naming another issuer is refused", async () => {
    const k1 = await testKey("EdDSA", "k1");
    const server = new JWKSServer([k1]);
    const f = setup(server, {}, true);
    await f.started;
    expect(f.hasKeys).toBe(true);
    expect(f.metadata?.jwks_uri).toBe(`${server.url}/jwks`);

    const evil = new JWKSServer([k1]);
    evil.discoveryIssuer = "https://someone-else.test";
    const g = setup(evil, {}, true);
    await g.started;
    expect(g.hasKeys).toBe(false);
    expect(g.lastError).toContain("someone-else");
    expect(evil.count("/jwks")).toBe(0);
  });
});
