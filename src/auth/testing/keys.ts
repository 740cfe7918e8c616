/**
 * Test helpers with real parts: real key pairs (RS256, ES256, EdDSA), real signed tokens, and a real JWKS
 * server on loopback whose keys can be rotated and which can be made to fail or hang.
 */
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";

export type TestAlg = "RS256" | "ES256" | "EdDSA";

export interface TestKey {
  readonly alg: TestAlg;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function testKey(alg: TestAlg, kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  return { alg, kid, privateKey, publicKey, publicJwk };
}

/** A token signed by `key`: `iat` now and `exp` in an hour unless `claims` say otherwise. */
export async function signToken(
  key: TestKey,
  claims: JWTPayload,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 3600, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT", ...header })
    .sign(key.privateKey);
}

export type ServerMode = "ok" | "error" | "hang";

/** A JWKS (and optional discovery) server on 127.0.0.1, port 0. */
export class JWKSServer {
  private keys: JWK[] = [];
  mode: ServerMode = "ok";
  /** Requests per path. */
  readonly hits = new Map<string, number>();
  /** Set to override the discovery document's issuer (attack: discovery naming another issuer). */
  discoveryIssuer: string | undefined;
  private readonly server: ReturnType<typeof Bun.serve>;

  constructor(keys: readonly TestKey[] = []) {
    this.setKeys(keys);
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        const path = new URL(req.url).pathname;
        this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
        if (this.mode === "hang") await Bun.sleep(10_000);
        if (this.mode === "error") return new Response("down", { status: 503 });
        if (path === "/.well-known/openid-configuration")
          return Response.json({ issuer: this.discoveryIssuer ?? this.url, jwks_uri: `${this.url}/jwks` });
        if (path === "/jwks") return Response.json({ keys: this.keys });
        return new Response("not found", { status: 404 });
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  setKeys(keys: readonly TestKey[]): void {
    this.keys = keys.map((k) => k.publicJwk);
  }

  count(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  stop(): void {
    this.server.stop(true);
  }
}
