/**
 * A stand-in gateway process for rate limit tests: a `Bun.serve` that calls the enforcer before
 * answering, exactly where the proxy's hook will. Started with `bun test/helpers/ratelimit-node.ts`,
 * configured by environment: RL_REDIS_URL (unset: in-process store), RL_LIMIT (a RouteRateLimit as
 * JSON). Prints `{"port":N}` on its first stdout line; `GET /__stats` returns the limiter's counters.
 */
import type { RouteRateLimit } from "../../src/model/types.ts";
import { createLimiter } from "../../src/ratelimit/create.ts";
import { RateLimitEnforcer } from "../../src/ratelimit/enforce.ts";

const limiter = createLimiter({ redisUrl: process.env.RL_REDIS_URL });
const enforcer = new RateLimitEnforcer({ limiter });
const limit = JSON.parse(process.env.RL_LIMIT ?? "{}") as RouteRateLimit;

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req, srv) {
    const url = new URL(req.url);
    if (url.pathname === "/__stats") return Response.json(limiter.stats());
    const outcome = await enforcer.check(limit, {
      clientIp: srv.requestIP(req)?.address ?? "",
      header: (name) => req.headers.get(name),
      method: req.method,
      path: url.pathname,
      routeName: "test/route",
    });
    if (!outcome.allowed) return outcome.response;
    return new Response("ok", { headers: outcome.headers ? [...outcome.headers] : [] });
  },
});
console.log(JSON.stringify({ port: server.port }));

process.on("SIGTERM", async () => {
  server.stop(true);
  await enforcer.close();
  process.exit(0);
});
