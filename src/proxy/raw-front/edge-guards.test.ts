/**
 * Edge guards in the raw-socket front's fast path, on the wire: a real GatewayServer (`front: "raw"`)
 * with a real AuthEnforcer (ES256 keys) and an in-process RateLimitEnforcer, and a real upstream that
 * sends its own RateLimit headers. An observer tells which path served each request: the fast path
 * reports through `endRaw`, the internal app through `end`, so these tests fail if guarded routes fall
 * back to the slow path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import type { Server } from "bun";
import { AuthEnforcer } from "../../auth/enforce.ts";
import { signToken, type TestKey, testKey } from "../../auth/testing/keys.ts";
import type { RouteAuth } from "../../model/index.ts";
import { RateLimitEnforcer } from "../../ratelimit/enforce.ts";
import { LocalLimiter } from "../../ratelimit/local.ts";
import { compile } from "../compile.ts";
import { GatewayServer } from "../listeners/server.ts";
import { type RequestInfo, type RequestObserver, startedInfo } from "../request/observer.ts";
import { jwtGuard, rateLimitGuard, TEST_ISSUER } from "../testing/guards.ts";
import { backend, forwardTo, listener, match, model, route, vhost } from "../testing/model.ts";
import { isFastRoute } from "./plan.ts";

interface Seen {
  path: string;
  headers: Record<string, string>;
  body: string;
}

let key: TestKey;
let up: Server<undefined>;
const seen: Seen[] = [];
let auth: AuthEnforcer;
let limits: RateLimitEnforcer;
let gw: GatewayServer;
let port = 0;
/** Statuses reported by the fast path (endRaw) and by the internal app (end). */
const fast: number[] = [];
const slow: number[] = [];

const observer: RequestObserver = {
  begin: () => startedInfo(),
  end: (_info: RequestInfo, _req: Request, res: Response) => {
    slow.push(res.status);
  },
  endRaw: (_info, ex) => {
    fast.push(ex.status);
  },
};

const gatewayModel = () =>
  model(
    [
      listener([
        vhost("g.example", [
          route("jwt", match("/jwt"), forwardTo("up"), { auth: jwtGuard(key) }),
          route("limited", match("/limited"), forwardTo("up"), {
            rateLimit: rateLimitGuard(2, [{ source: "ClientIP" }], "limited"),
          }),
          route("both", match("/both"), forwardTo("up"), {
            auth: jwtGuard(key),
            rateLimit: rateLimitGuard(1, [{ source: "Claim", name: "sub" }], "both"),
          }),
          route("modified", match("/modified"), forwardTo("up"), {
            rateLimit: rateLimitGuard(100, [], "modified"),
            filters: [
              {
                kind: "ResponseHeaderModifier",
                edits: {
                  set: [
                    { name: "ratelimit", value: "from-filter" },
                    { name: "x-filtered", value: "yes" },
                  ],
                  add: [],
                  remove: [],
                },
              },
            ],
          }),
          route("closed", match("/closed"), forwardTo("up"), {
            auth: jwtGuard(key, { failClosed: "no usable key" }),
          }),
          route("open", match("/"), forwardTo("up")),
        ]),
      ]),
    ],
    [backend("up", [up.port ?? 0])],
  );

beforeAll(async () => {
  key = await testKey("ES256", "k1");
  up = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => {
        headers[k] = v;
      });
      seen.push({ path: new URL(req.url).pathname, headers, body: await req.text() });
      // The backend's own limit headers: the gateway's must replace them on a limited route.
      return new Response("ok", {
        headers: { ratelimit: '"backend";r=9;t=9', "ratelimit-policy": "backend" },
      });
    },
  });
  auth = new AuthEnforcer();
  limits = new RateLimitEnforcer({ limiter: new LocalLimiter() });
  gw = new GatewayServer({ bind: "127.0.0.1", front: "raw", guards: { auth, rateLimit: limits }, observer });
  const m = gatewayModel();
  auth.update(m);
  await auth.ready();
  await gw.apply(m);
  port = gw.ports()[0]?.port ?? 0;
});

afterAll(async () => {
  await gw?.stop();
  auth?.close();
  await limits?.close();
  await up?.stop(true);
});

/** Writes `parts` (pausing between them) on one connection and reads until the server closes it. */
function exchange(parts: string[], gapMs = 20, to = port): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port: to }, async () => {
      for (const p of parts) {
        socket.write(p);
        await Bun.sleep(gapMs);
      }
    });
    socket.setTimeout(5000, () => socket.destroy(new Error("timed out")));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

const statuses = (wire: string) => [...wire.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
const req = (path: string, extra = "", close = true) =>
  `GET ${path} HTTP/1.1\r\nHost: g.example\r\n${extra}${close ? "Connection: close\r\n" : ""}\r\n`;
const bearer = (token: string) => `Authorization: Bearer ${token}\r\n`;
const token = (claims: Record<string, unknown>) =>
  signToken(key, { iss: TEST_ISSUER, aud: "api", ...claims });
/** The value of header `name` in the n-th response of `wire`, lower-case names. */
function header(wire: string, name: string, n = 0): string | undefined {
  const head = wire.split(/HTTP\/1\.1 /)[n + 1] ?? "";
  const m = head.match(new RegExp(`^${name}: (.*)$`, "im"));
  return m?.[1]?.trim();
}

describe("plan", () => {
  test("token auth, rate limits and OIDC routes are fast (dispatch relays OIDC's login flow); guarded CORS is not", () => {
    const oidc = {
      issuer: TEST_ISSUER,
      clientId: "c",
      clientSecret: "s",
    } as unknown as NonNullable<RouteAuth["oidc"]>;
    const cors = {
      kind: "CORS" as const,
      allowOrigins: ["https://app.example"],
      allowMethods: ["GET"],
      allowHeaders: [],
      exposeHeaders: [],
      allowCredentials: false,
      maxAgeSeconds: 5,
    };
    const table = compile(
      model(
        [
          listener([
            vhost("p.example", [
              route("jwt", match("/a"), forwardTo("up"), { auth: jwtGuard(key) }),
              route("limit", match("/b"), forwardTo("up"), { rateLimit: rateLimitGuard(1, [], "b") }),
              route("oidc", match("/c"), forwardTo("up"), { auth: jwtGuard(key, { oidc }) }),
              route("closed", match("/d"), forwardTo("up"), {
                auth: jwtGuard(key, { oidc, failClosed: "bad" }),
              }),
              route("cors", match("/e"), forwardTo("up"), { auth: jwtGuard(key), filters: [cors] }),
            ]),
          ]),
        ],
        [backend("up", [1])],
      ),
    );
    const routes = table.listeners[0]?.hosts.exact.get("p.example")?.routes ?? [];
    expect(routes.map((r) => [r.name, isFastRoute(r)])).toEqual([
      ["jwt", true],
      ["limit", true],
      ["oidc", true],
      ["closed", true],
      ["cors", false],
    ]);
  });
});

describe("authentication in the fast path", () => {
  test("a valid token is forwarded with the claim header set and the client's copy removed", async () => {
    const t = await token({ sub: "alice", scope: "read" });
    const before = seen.length;
    const fastBefore = fast.length;
    // Twice on one connection: the first verifies (a promise), the second is a cache hit (synchronous).
    const wire = await exchange([
      req("/jwt/a", `${bearer(t)}X-User: mallory\r\n`, false),
      req("/jwt/b", bearer(t)),
    ]);
    expect(statuses(wire)).toEqual([200, 200]);
    const got = seen.slice(before);
    expect(got.map((s) => s.path)).toEqual(["/jwt/a", "/jwt/b"]);
    for (const s of got) expect(s.headers["x-user"]).toBe("alice");
    expect(fast.slice(fastBefore)).toEqual([200, 200]);
  });

  test("no token or a bad one: 401 with WWW-Authenticate, nothing reaches the backend", async () => {
    const before = seen.length;
    const fastBefore = fast.length;
    const forged = await signToken(key, {
      iss: "https://evil.example",
      aud: "api",
      sub: "eve",
      scope: "read",
    });
    const wire = await exchange([
      req("/jwt/none", "", false) +
        req("/jwt/bad", bearer("not.a.jwt"), false) +
        req("/jwt/evil", bearer(forged)),
    ]);
    expect(statuses(wire)).toEqual([401, 401, 401]);
    expect(header(wire, "www-authenticate", 0)).toBe('Bearer realm="test/jwt"');
    expect(header(wire, "www-authenticate", 1)).toContain('error="invalid_token"');
    expect(header(wire, "server", 0)).toBeDefined();
    expect(header(wire, "content-length", 0)).toBe(String("401 Unauthorized\n".length));
    expect(wire).toContain("401 Unauthorized\n");
    expect(seen.length).toBe(before);
    expect(fast.slice(fastBefore)).toEqual([401, 401, 401]);
  });

  test("a token without the required scope: 403", async () => {
    const before = seen.length;
    const t = await token({ sub: "bob", scope: "write" });
    const wire = await exchange([req("/jwt/x", bearer(t))]);
    expect(statuses(wire)).toEqual([403]);
    expect(header(wire, "www-authenticate")).toContain("insufficient_scope");
    expect(seen.length).toBe(before);
  });

  test("a body sent while the token is being verified is held and forwarded whole", async () => {
    const t = await token({ sub: "carol", scope: "read" });
    const before = seen.length;
    const wire = await exchange([
      `POST /jwt/upload HTTP/1.1\r\nHost: g.example\r\n${bearer(t)}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      "4\r\nwiki\r\n",
      "5\r\npedia\r\n0\r\n\r\n",
    ]);
    expect(statuses(wire)).toEqual([200]);
    expect(seen.slice(before).map((s) => [s.path, s.body, s.headers["x-user"]])).toEqual([
      ["/jwt/upload", "wikipedia", "carol"],
    ]);
  });

  test("a body arriving with the head is held until the guards decide, then forwarded; keep-alive holds", async () => {
    const t = await token({ sub: "frank", scope: "read" });
    const before = seen.length;
    const fastBefore = fast.length;
    // One write: the connection hands the body over before the (not yet cached) token is verified.
    const wire = await exchange([
      `POST /jwt/held HTTP/1.1\r\nHost: g.example\r\n${bearer(t)}Content-Length: 5\r\n\r\nhello${req("/jwt/next", bearer(t))}`,
    ]);
    expect(statuses(wire)).toEqual([200, 200]);
    expect(seen.slice(before).map((s) => [s.path, s.body])).toEqual([
      ["/jwt/held", "hello"],
      ["/jwt/next", ""],
    ]);
    expect(fast.slice(fastBefore)).toEqual([200, 200]);
  });

  test("a body-carrying request without a token: 401, its body never read as a request, nothing forwarded", async () => {
    const before = seen.length;
    const inner = req("/jwt/smuggled");
    // Larger than requestBufferBytes, so streamed: refused before its body is read, and then closed.
    const padding = "x".repeat(70 * 1024);
    const wire = await exchange([
      `POST /jwt/post HTTP/1.1\r\nHost: g.example\r\nContent-Length: ${inner.length + padding.length + 10}\r\n\r\n`,
      inner,
    ]);
    expect(statuses(wire)).toEqual([401]);
    expect(header(wire, "connection")).toBe("close");
    expect(seen.length).toBe(before);
  });

  test("a small body is read whole first: then 401, and the connection goes on with the next request", async () => {
    const before = seen.length;
    const inner = req("/jwt/smuggled", "", false);
    const wire = await exchange([
      `POST /jwt/post HTTP/1.1\r\nHost: g.example\r\nContent-Length: ${inner.length}\r\n\r\n`,
      inner,
      req("/jwt/again"),
    ]);
    expect(statuses(wire)).toEqual([401, 401]);
    expect(seen.length).toBe(before);
  });
});

describe("rate limiting in the fast path", () => {
  test("admitted responses carry the gateway's RateLimit headers in place of the backend's; then 429", async () => {
    const before = seen.length;
    const fastBefore = fast.length;
    const wire = await exchange([req("/limited", "", false) + req("/limited", "", false) + req("/limited")]);
    expect(statuses(wire)).toEqual([200, 200, 429]);
    for (const n of [0, 1]) {
      expect(header(wire, "ratelimit-policy", n)).toBe('"default";q=2;w=3600');
      expect(header(wire, "ratelimit", n)).toStartWith('"default";r=');
      expect(wire.split(/HTTP\/1\.1 /)[n + 1]).not.toContain("backend");
    }
    expect(header(wire, "retry-after", 2)).toMatch(/^\d+$/);
    expect(header(wire, "ratelimit", 2)).toStartWith('"default";r=0');
    expect(header(wire, "content-type", 2)).toBe("application/problem+json");
    expect(header(wire, "server", 2)).toBeDefined();
    expect(seen.length).toBe(before + 2);
    expect(fast.slice(fastBefore)).toEqual([200, 200, 429]);
  });

  test("with response filters too: the filters run first, the gateway's limit headers last", async () => {
    const fastBefore = fast.length;
    const wire = await exchange([req("/modified")]);
    expect(statuses(wire)).toEqual([200]);
    expect(header(wire, "x-filtered")).toBe("yes");
    expect(header(wire, "ratelimit-policy")).toBe('"default";q=100;w=3600');
    expect(header(wire, "ratelimit")).toStartWith('"default";r=');
    expect(wire.match(/^ratelimit:/gim)?.length).toBe(1);
    expect(fast.slice(fastBefore)).toEqual([200]);
  });

  test("a limit keyed by a verified claim counts per identity, after authentication", async () => {
    const dave = await token({ sub: "dave", scope: "read" });
    const erin = await token({ sub: "erin", scope: "read" });
    const before = seen.length;
    const wire = await exchange([
      req("/both", bearer(dave), false) + req("/both", bearer(dave), false) + req("/both", bearer(erin)),
    ]);
    expect(statuses(wire)).toEqual([200, 429, 200]);
    expect(seen.slice(before).map((s) => s.headers["x-user"])).toEqual(["dave", "erin"]);
    // No token: authentication refuses first, the limit is not consulted.
    expect(statuses(await exchange([req("/both")]))).toEqual([401]);
  });
});

describe("fail closed", () => {
  test("a policy that cannot be enforced refuses even a valid token (401), in the fast path", async () => {
    const before = seen.length;
    const fastBefore = fast.length;
    const t = await token({ sub: "alice", scope: "read" });
    expect(statuses(await exchange([req("/closed", bearer(t))]))).toEqual([401]);
    expect(seen.length).toBe(before);
    expect(fast.slice(fastBefore)).toEqual([401]);
  });

  test("a guarded route on a gateway without the engine answers 500 and forwards nothing", async () => {
    const bare = new GatewayServer({ bind: "127.0.0.1", front: "raw" });
    try {
      await bare.apply(gatewayModel());
      const to = bare.ports()[0]?.port ?? 0;
      const before = seen.length;
      const t = await token({ sub: "alice", scope: "read" });
      expect(statuses(await exchange([req("/jwt/x", bearer(t))], 20, to))).toEqual([500]);
      expect(statuses(await exchange([req("/limited")], 20, to))).toEqual([500]);
      expect(seen.length).toBe(before);
    } finally {
      await bare.stop();
    }
  });
});
