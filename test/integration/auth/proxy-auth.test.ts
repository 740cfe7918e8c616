/**
 * Authentication in the real request path: a GatewayServer with an AuthEnforcer, a JWKS server with a
 * real ES256 key, and an upstream that shows what it received. Routes without a policy stay open; routes
 * with one refuse what the policy refuses and pass claims upstream, never a client's forged copy. Run on
 * both fronts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AuthEnforcer } from "../../../src/auth/enforce.ts";
import { JWKSServer, signToken, type TestKey, testKey } from "../../../src/auth/testing/keys.ts";
import type { Filter, RouteAuth } from "../../../src/model/index.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";

forEachFront("GatewayServer with an AuthEnforcer", (front) => {
  let key: TestKey;
  let jwks: JWKSServer;
  let upstream: TestUpstream;
  let enforcer: AuthEnforcer;
  let proxy: GatewayServer;
  let base: string;

  function policy(issuer: string, jwksUrl: string): RouteAuth {
    return {
      policy: { kind: "AuthPolicy", namespace: "test", name: "jwt" },
      jwt: {
        providers: [
          {
            name: "main",
            issuer,
            audiences: ["api"],
            audienceCheck: true,
            keys: { type: "RemoteJWKS", url: jwksUrl },
            algorithms: ["ES256"],
            clockSkewSeconds: 30,
          },
        ],
        tokenSources: [{ type: "Header", name: "authorization", prefix: "Bearer " }],
      },
      authorization: { requiredScopes: ["read"], requiredClaims: [] },
      claimToHeaders: [{ claim: "sub", header: "x-user" }],
    };
  }

  const cors: Filter = {
    kind: "CORS",
    allowOrigins: ["https://app.example"],
    allowMethods: ["GET"],
    allowHeaders: [],
    exposeHeaders: [],
    allowCredentials: false,
    maxAgeSeconds: 60,
  };

  beforeAll(async () => {
    key = await testKey("ES256", "k1");
    jwks = new JWKSServer([key]);
    upstream = startUpstream("app");
    enforcer = new AuthEnforcer();
    proxy = new GatewayServer({ bind: "127.0.0.1", guards: { auth: enforcer }, front });
    const m = model(
      [
        listener([
          vhost("app.test", [
            route("private", match("/private"), forwardTo("app"), {
              auth: policy(jwks.url, `${jwks.url}/jwks`),
            }),
            route("cors", match("/cors"), forwardTo("app"), {
              auth: policy(jwks.url, `${jwks.url}/jwks`),
              filters: [cors],
            }),
            // CORS on one backend only: a preflight could be forwarded to the other, so it is guarded.
            route(
              "cors-one-backend",
              match("/cors-some"),
              forwardTo({ id: "app", weight: 1, filters: [cors] }, "app"),
              {
                auth: policy(jwks.url, `${jwks.url}/jwks`),
              },
            ),
            route("public", match("/"), forwardTo("app")),
          ]),
        ]),
      ],
      [backend("app", [upstream.port])],
    );
    enforcer.update(m);
    await enforcer.ready();
    await proxy.apply(m);
    base = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
  });

  afterAll(async () => {
    await proxy?.stop();
    enforcer?.close();
    await upstream?.stop();
    jwks?.stop();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { headers: { host: "app.test", ...headers } });

  describe("auth in the request path", () => {
    test("a route without a policy is open", async () => {
      expect((await get("/hello")).status).toBe(200);
    });

    test("no token: 401 with WWW-Authenticate, and nothing reaches the upstream", async () => {
      const before = upstream.requests.length;
      const res = await get("/private/x");
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toStartWith("Bearer");
      expect(upstream.requests.length).toBe(before);
    });

    test("a CORS preflight is answered without a token; an OPTIONS the filter would forward is guarded", async () => {
      const before = upstream.requests.length;
      const preflight = { "access-control-request-method": "GET" };
      const answered = await fetch(`${base}/cors`, {
        method: "OPTIONS",
        headers: { host: "app.test", origin: "https://app.example", ...preflight },
      });
      expect(answered.status).toBe(204);
      expect(answered.headers.get("access-control-allow-origin")).toBe("https://app.example");
      // No Origin: the CORS filter would pass it on, so it must meet the guard like any request.
      const bare = await fetch(`${base}/cors`, {
        method: "OPTIONS",
        headers: { host: "app.test", ...preflight },
      });
      expect(bare.status).toBe(401);
      // CORS on one backend of two: the other would forward it.
      for (let i = 0; i < 4; i++) {
        const some = await fetch(`${base}/cors-some`, {
          method: "OPTIONS",
          headers: { host: "app.test", origin: "https://app.example", ...preflight },
        });
        expect(some.status).toBe(401);
      }
      expect(upstream.requests.length).toBe(before);
    });

    test("valid token: forwarded with the claim header, the client's forged one removed", async () => {
      const token = await signToken(key, { iss: jwks.url, aud: "api", sub: "alice", scope: "read write" });
      const res = await get("/private/x", { authorization: `Bearer ${token}`, "x-user": "mallory" });
      expect(res.status).toBe(200);
      const seen = upstream.requests.at(-1);
      expect(seen?.headers["x-user"]).toBe("alice");
    });

    test("valid token without the required scope: 403", async () => {
      const token = await signToken(key, { iss: jwks.url, aud: "api", sub: "bob", scope: "write" });
      expect((await get("/private/x", { authorization: `Bearer ${token}` })).status).toBe(403);
    });

    test("a token from another issuer: 401", async () => {
      const token = await signToken(key, {
        iss: "https://evil.example",
        aud: "api",
        sub: "eve",
        scope: "read",
      });
      expect((await get("/private/x", { authorization: `Bearer ${token}` })).status).toBe(401);
    });

    test("a route asking for auth on a server without an enforcer fails closed", async () => {
      const bare = new GatewayServer({ bind: "127.0.0.1", front });
      try {
        await bare.apply(
          model(
            [
              listener([
                vhost("app.test", [route("p", match("/"), forwardTo("app"), { auth: policy("x", "y") })]),
              ]),
            ],
            [backend("app", [upstream.port])],
          ),
        );
        const res = await fetch(`http://127.0.0.1:${bare.ports()[0]?.port}/`, {
          headers: { host: "app.test" },
        });
        expect(res.status).toBe(500);
      } finally {
        await bare.stop();
      }
    });
  });
});
