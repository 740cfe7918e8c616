/**
 * Basic authentication and API keys in the real request path, on both fronts: a GatewayServer with an
 * AuthEnforcer and an upstream that shows what it received. Refusals never reach the upstream; what gets
 * in carries the user or key name upstream, never a client's forged copy, and not the credential itself.
 * On the raw front these routes stay on the fast path (plan.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keyDigest } from "../../../src/auth/credentials/credential-check.ts";
import { AuthEnforcer } from "../../../src/auth/enforce.ts";
import type { RouteAuth } from "../../../src/model/index.ts";
import { compile } from "../../../src/proxy/compile.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { isFastRoute } from "../../../src/proxy/raw-front/plan.ts";
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

const php = "$2y$07$BCryptRequires22Chrcte/VlQH0piJtjXl.0t1XkA8pw9dMXTpOq"; // "rasmuslerdorf"

const base = (name: string) => ({
  policy: { kind: "AuthPolicy", namespace: "test", name },
  authorization: { requiredScopes: [], requiredClaims: [] },
  claimToHeaders: [],
});

const basicAuth: RouteAuth = {
  ...base("basic"),
  basic: {
    realm: "Staff only",
    users: [
      { name: "alice", passwordHash: "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/" }, // "secret"
      { name: "rasmus", passwordHash: php },
    ],
    usernameHeader: "x-user",
  },
};

const keyAuth: RouteAuth = {
  ...base("keys"),
  apiKeys: {
    sources: [
      { type: "Header", name: "x-api-key" },
      { type: "QueryParameter", name: "api_key" },
    ],
    keys: [{ name: "billing", keyDigest: keyDigest("k-billing-123") }],
    clientIDHeader: "x-api-key-name",
    sanitize: true,
  },
};

/** satisfy Any: keys, or an address the allow list admits (the test client is loopback). */
const anyOf = (name: string, allow: string[], deny: string[] = []) => ({
  auth: { ...keyAuth, policy: base(name).policy, satisfy: "Any" as const },
  ipAccess: [{ source: base(name).policy, allow, deny }],
});

const testModel = (port: number) =>
  model(
    [
      listener([
        vhost("app.test", [
          route("basic", match("/basic"), forwardTo("app"), { auth: basicAuth }),
          route("keys", match("/keys"), forwardTo("app"), { auth: keyAuth }),
          route("inside", match("/inside"), forwardTo("app"), anyOf("inside", ["127.0.0.1", "::1"])),
          route("outside", match("/outside"), forwardTo("app"), anyOf("outside", ["10.0.0.0/8"])),
          route(
            "denied",
            match("/denied"),
            forwardTo("app"),
            anyOf("denied", ["127.0.0.0/8"], ["127.0.0.1"]),
          ),
          route("forward", match("/forward"), forwardTo("app"), {
            auth: {
              ...base("forward"),
              external: {
                url: "http://127.0.0.1:1/check",
                signinRedirectParam: "rd",
                responseHeaders: [],
                alwaysSetCookie: false,
                timeoutMs: 1000,
              },
            },
          }),
        ]),
      ]),
    ],
    [backend("app", [port])],
  );

const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`;

test("basic-auth, API-key, satisfy-Any and forward-auth routes stay on the raw front's fast path", () => {
  const table = compile(testModel(1));
  const routes = table.listeners[0]?.hosts.exact.get("app.test")?.routes ?? [];
  expect(routes.map((r) => [r.name, isFastRoute(r)])).toEqual([
    ["basic", true],
    ["keys", true],
    ["inside", true],
    ["outside", true],
    ["denied", true],
    ["forward", true],
  ]);
});

forEachFront("basic auth and API keys", (front) => {
  let upstream: TestUpstream;
  let enforcer: AuthEnforcer;
  let proxy: GatewayServer;
  let url: string;

  beforeAll(async () => {
    upstream = startUpstream("app");
    enforcer = new AuthEnforcer();
    proxy = new GatewayServer({ bind: "127.0.0.1", guards: { auth: enforcer }, front });
    const m = testModel(upstream.port);
    enforcer.update(m);
    await proxy.apply(m);
    url = `http://127.0.0.1:${proxy.ports()[0]?.port}`;
  });

  afterAll(async () => {
    await proxy?.stop();
    enforcer?.close();
    await upstream?.stop();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { headers: { host: "app.test", ...headers } });

  describe("basic", () => {
    test("missing, wrong, unknown user: 401 with the Basic challenge, nothing upstream", async () => {
      const before = upstream.requests.length;
      const tries: Record<string, string>[] = [
        {},
        { authorization: basic("alice", "wrong") },
        { authorization: basic("eve", "secret") },
      ];
      for (const h of tries) {
        const res = await get("/basic/x", h);
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Basic realm="Staff only", charset="UTF-8"');
        await res.text();
      }
      expect(upstream.requests.length).toBe(before);
    });

    test("valid (apr1 and bcrypt, twice each): forwarded with the user, no Authorization, forged x-user gone", async () => {
      for (const [user, pw] of [
        ["alice", "secret"],
        ["rasmus", "rasmuslerdorf"],
        ["alice", "secret"],
        ["rasmus", "rasmuslerdorf"],
      ] as const) {
        const res = await get("/basic/x", { authorization: basic(user, pw), "x-user": "mallory" });
        expect(res.status).toBe(200);
        await res.text();
        const seen = upstream.requests.at(-1);
        expect(seen?.headers["x-user"]).toBe(user);
        expect(seen?.headers.authorization).toBeUndefined();
      }
    });
  });

  describe("API keys", () => {
    test("in the header: forwarded with the key's name, the key header removed", async () => {
      const res = await get("/keys/a", { "x-api-key": "k-billing-123", "x-api-key-name": "forged" });
      expect(res.status).toBe(200);
      await res.text();
      const seen = upstream.requests.at(-1);
      expect(seen?.headers["x-api-key-name"]).toBe("billing");
      expect(seen?.headers["x-api-key"]).toBeUndefined();
    });

    test("in the query parameter: the key is taken out of the query sent upstream, the rest kept", async () => {
      const res = await get("/keys/b?a=1&api_key=k-billing-123&b=%2F");
      expect(res.status).toBe(200);
      await res.text();
      const seen = upstream.requests.at(-1);
      expect(seen?.headers["x-api-key-name"]).toBe("billing");
      expect(seen?.path).toBe("/keys/b?a=1&b=%2F");
      const only = await get("/keys/b?api_key=k-billing-123");
      await only.text();
      expect(upstream.requests.at(-1)?.path).toBe("/keys/b");
    });

    test("a wrong or missing key: 401, nothing upstream", async () => {
      const before = upstream.requests.length;
      for (const [path, h] of [
        ["/keys/c", { "x-api-key": "k-billing-124" }],
        ["/keys/c?api_key=nope", {}],
        ["/keys/c", {}],
      ] as const) {
        const res = await get(path, h);
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toStartWith("ApiKey");
        await res.text();
      }
      expect(upstream.requests.length).toBe(before);
    });
  });

  describe("satisfy Any", () => {
    test("inside the allow list: served without a key; forged identity headers and a stray key gone", async () => {
      const res = await get("/inside/a?x=1&api_key=stray", {
        "x-api-key-name": "forged",
        "x-api-key": "nope",
      });
      expect(res.status).toBe(200);
      await res.text();
      const seen = upstream.requests.at(-1);
      expect(seen?.headers["x-api-key-name"]).toBeUndefined();
      expect(seen?.headers["x-api-key"]).toBeUndefined();
      expect(seen?.path).toBe("/inside/a?x=1");
    });

    test("outside it: the key's 401 challenge, not the list's 403; a valid key gets in", async () => {
      const before = upstream.requests.length;
      const res = await get("/outside/a");
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toStartWith("ApiKey");
      await res.text();
      expect(upstream.requests.length).toBe(before);
      const ok = await get("/outside/a", { "x-api-key": "k-billing-123" });
      expect(ok.status).toBe(200);
      await ok.text();
      expect(upstream.requests.at(-1)?.headers["x-api-key-name"]).toBe("billing");
    });

    test("a deny list refuses whatever the key (unlike nginx's satisfy any)", async () => {
      const before = upstream.requests.length;
      for (const h of [{}, { "x-api-key": "k-billing-123" }] as Record<string, string>[]) {
        const res = await get("/denied/a", h);
        expect(res.status).toBe(403);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        await res.text();
      }
      expect(upstream.requests.length).toBe(before);
    });
  });
});
