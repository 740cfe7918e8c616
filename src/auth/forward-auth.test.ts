import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import type { ExternalAuth, RouteAuth } from "../model/index.ts";
import { AuthEnforcer } from "./enforce.ts";
import { escapeURI, ForwardAuth, type ForwardAuthInput } from "./forward-auth.ts";

/** A real service: `/cookie` admits with a Set-Cookie, `/big` with an oversized header, else 200. */
let service: Server<undefined>;
let hits = 0;
beforeAll(() => {
  service = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      hits++;
      const path = new URL(req.url).pathname;
      if (path === "/cookie") return new Response(null, { headers: { "set-cookie": "s=1", "x-user": "a" } });
      if (path === "/big") return new Response(null, { headers: { "x-user": "u".repeat(9000) } });
      return new Response(null, { headers: { "x-user": "alice" } });
    },
  });
});
afterAll(() => service.stop(true));

const ext = (path: string, key?: string): ExternalAuth => ({
  url: `http://127.0.0.1:${service.port}${path}`,
  signinRedirectParam: "rd",
  responseHeaders: ["x-user"],
  alwaysSetCookie: false,
  timeoutMs: 2000,
  ...(key !== undefined ? { cache: { key, seconds: { "200": 60 } } } : {}),
});

const input = (route: string, headers: Record<string, string> = {}): ForwardAuthInput => ({
  route,
  method: "GET",
  scheme: "http",
  host: "app.example",
  port: 80,
  path: "/",
  query: "",
  clientIp: "127.0.0.1",
  headers: new Headers(headers),
});

describe("forward authentication's kept answers", () => {
  test("kept per route: another route of the same policy asks the service itself", async () => {
    const f = new ForwardAuth();
    const e = ext("/ok", "$cookie_s");
    const before = hits;
    for (const route of ["a", "a", "b", "b", "a"]) {
      const o = await f.check(e, input(route, { cookie: "s=1" }), "t");
      expect(o.ok).toBe(true);
    }
    expect(hits - before).toBe(2);
  });

  test("not kept: an answer setting a cookie, and a key whose variables are all empty", async () => {
    const f = new ForwardAuth();
    const before = hits;
    for (let i = 0; i < 2; i++)
      await f.check(ext("/cookie", "$cookie_s"), input("a", { cookie: "s=1" }), "t");
    for (let i = 0; i < 2; i++) await f.check(ext("/ok", "$cookie_s"), input("a"), "t");
    expect(hits - before).toBe(4);
  });

  test("a copied header longer than 8 KiB fails closed (503)", async () => {
    const o = await new ForwardAuth().check(ext("/big"), input("a"), "t");
    expect(o.ok ? 200 : o.response.status).toBe(503);
  });
});

describe("forward authentication beside other methods", () => {
  test("a policy with jwt and externalAuth refuses a request without a token (401), never asks the service", async () => {
    const auth: RouteAuth = {
      policy: { kind: "AuthPolicy", namespace: "t", name: "both" },
      jwt: {
        providers: [
          {
            name: "p",
            issuer: "https://id.example",
            audiences: ["api"],
            audienceCheck: true,
            keys: { type: "Inline", jwks: '{"keys":[]}' },
            algorithms: ["ES256"],
            clockSkewSeconds: 30,
          },
        ],
        tokenSources: [{ type: "Header", name: "authorization", prefix: "Bearer " }],
      },
      external: ext("/ok"),
      authorization: { requiredScopes: [], requiredClaims: [] },
      claimToHeaders: [],
    };
    const before = hits;
    const o = await new AuthEnforcer().checkToken(auth, new Headers(), "");
    expect(o.ok ? 200 : o.response.status).toBe(401);
    expect(hits).toBe(before);
  });
});

test("the sign-in page's rd is escaped as nginx's set_escape_uri escapes", () => {
  expect(escapeURI("/a b/?x=1&y=$@,|`!*'()~%20")).toBe("%2Fa%20b%2F%3Fx%3D1%26y%3D$@,|`!*'()~%2520");
});
