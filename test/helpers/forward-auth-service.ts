/**
 * A real session-cookie login service for forward-authentication tests, shaped like oauth2-proxy and
 * Authelia behind ingress-nginx's `auth-url`/`auth-signin`:
 * - `GET /check`: 200 with `X-Auth-Request-User` and `-Email` for a live `session` cookie, else 401;
 * - `GET /login?rd=URL`: starts a session for `alice` (Set-Cookie) and redirects to `rd`;
 * - `GET /logout`: ends the cookie's session;
 * and the misbehaving answers the failure matrix needs: `/slow` (answers after 2 s), `/redirect` (302),
 * `/huge` (500 with a 10 MB body), `/forbidden` (403 with a Set-Cookie). Every request it sees is kept.
 */
import type { Server } from "bun";

export interface SeenCheck {
  readonly path: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface ForwardAuthService {
  readonly url: string;
  readonly seen: SeenCheck[];
  /** Every live session ends as if its time had run out. */
  expireAll(): void;
  stop(): Promise<void>;
}

export function startForwardAuthService(): ForwardAuthService {
  const sessions = new Map<string, { user: string; untilMs: number }>();
  const seen: SeenCheck[] = [];
  const cookieOf = (req: Request) => /(?:^|;\s*)session=([^;]+)/.exec(req.headers.get("cookie") ?? "")?.[1];
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      seen.push({
        path: url.pathname + url.search,
        method: req.method,
        headers: Object.fromEntries(req.headers),
      });
      switch (url.pathname) {
        case "/check": {
          const s = sessions.get(cookieOf(req) ?? "");
          if (s === undefined || s.untilMs < Date.now())
            return new Response("no session", {
              status: 401,
              headers: { "www-authenticate": 'Cookie realm="test"' },
            });
          return new Response(null, {
            status: 200,
            headers: { "x-auth-request-user": s.user, "x-auth-request-email": `${s.user}@example.com` },
          });
        }
        case "/login": {
          const token = crypto.randomUUID();
          sessions.set(token, { user: "alice", untilMs: Date.now() + 3_600_000 });
          return new Response(null, {
            status: 302,
            headers: {
              location: url.searchParams.get("rd") ?? "/",
              "set-cookie": `session=${token}; Path=/; HttpOnly`,
            },
          });
        }
        case "/logout":
          sessions.delete(cookieOf(req) ?? "");
          return new Response("bye", { headers: { "set-cookie": "session=; Path=/; Max-Age=0" } });
        case "/slow":
          await Bun.sleep(2000);
          return new Response(null, { status: 200 });
        case "/redirect":
          return new Response(null, { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } });
        case "/huge":
          return new Response(new Uint8Array(10 * 1024 * 1024), { status: 500 });
        case "/forbidden":
          return new Response("no", { status: 403, headers: { "set-cookie": "seen=1; Path=/" } });
        default:
          return new Response("not here", { status: 404 });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    seen,
    expireAll() {
      for (const s of sessions.values()) s.untilMs = 0;
    },
    stop: () => server.stop(true),
  };
}
