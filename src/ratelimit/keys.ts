/**
 * Bucket keys, the same for Redis and the in-process store:
 * `gatehouse:rl:{<bucket>|<parts>}:<rule>` for a limit with one rule, and
 * `gatehouse:rl:{<bucket>}:<rule>|<parts>` for several. The `{…}` is the Redis Cluster hash tag: every
 * key of one request must be in one slot for the single script call, so with several rules the tag is
 * the bucket (all of a policy's counters for one route on one node); with one rule it includes the key
 * parts, spreading clients over the cluster.
 * Values a client chooses freely (header, claim, path) are hashed: bounded length, no secrets (API keys)
 * stored in Redis, and no brace or separator can change which slot or bucket a key lands in.
 */
import type { RateLimitKey, RouteRateLimit } from "../model/index.ts";

/** What the request path tells the rate limiter; built by the proxy for each limited request. */
export interface RateLimitContext {
  /** The client (`--trusted-proxies` applied: proxy/client/trusted-proxies.ts). */
  readonly clientIp: string;
  /**
   * The connection's peer (socket, or PROXY header source): a policy's own `clientIP.trustedProxies`
   * walks X-Forwarded-For from here instead (absent: `clientIp`).
   */
  readonly peer?: string;
  /**
   * The listener reads PROXY headers: the header named the client, and no X-Forwarded-For is believed,
   * a policy's own `clientIP.trustedProxies` included (an L4 balancer passes the client's header on).
   */
  readonly forwardedForBarred?: boolean;
  /** A request header by lower-case name, null when absent. */
  header(name: string): string | null;
  readonly method: string;
  /** The request path, without the query. */
  readonly path: string;
  /** The route that matched (`Route.name`). */
  readonly routeName: string;
  /** Verified JWT claims when auth ran; key source `Claim` reads them. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

export const keyPrefix = "gatehouse:rl:";

export function bucketKeys(limit: RouteRateLimit, ctx: RateLimitContext, clientIp: string): string[] {
  const single = limit.rules.length === 1;
  return limit.rules.map((rule) => {
    const parts = rule.keys.map((k) => keyPart(k, ctx, clientIp)).join("|");
    return single
      ? `${keyPrefix}{${limit.bucket}|${parts}}:${rule.name}`
      : `${keyPrefix}{${limit.bucket}}:${rule.name}|${parts}`;
  });
}

function keyPart(key: RateLimitKey, ctx: RateLimitContext, clientIp: string): string {
  switch (key.source) {
    case "ClientIP":
      return `ip=${clientIp}`;
    case "Header": {
      const value = ctx.header(key.name);
      return `h.${key.name}=${value === null ? `~ip=${clientIp}` : digest(value)}`;
    }
    case "Claim": {
      const value = claimValue(ctx.claims, key.name);
      return `c.${key.name}=${value === undefined ? `~ip=${clientIp}` : digest(value)}`;
    }
    case "Path":
      return `p=${digest(ctx.path)}`;
    case "Method":
      return `m=${/^[A-Z]{1,16}$/.test(ctx.method) ? ctx.method : digest(ctx.method)}`;
    case "Route":
      return `r=${ctx.routeName}`;
  }
}

/**
 * A claim by name; a dotted name walks nested objects when no claim has the dotted name itself. Arrays
 * are joined with `,`, objects serialised; absent, null or empty: undefined (the client address stands in).
 */
export function claimValue(
  claims: Readonly<Record<string, unknown>> | undefined,
  name: string,
): string | undefined {
  if (claims === undefined) return undefined;
  let value: unknown = Object.hasOwn(claims, name) ? claims[name] : undefined;
  if (value === undefined && name.includes(".")) {
    value = claims;
    for (const part of name.split(".")) {
      value =
        value !== null && typeof value === "object" && Object.hasOwn(value, part)
          ? (value as Record<string, unknown>)[part]
          : undefined;
    }
  }
  if (value === undefined || value === null || value === "") return undefined;
  if (Array.isArray(value)) return value.map(String).join(",");
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** 132 bits of SHA-256, base64url: collision-resistant enough that a client cannot aim at another's bucket. */
function digest(value: string): string {
  return Bun.CryptoHasher.hash("sha256", value, "base64url").slice(0, 22);
}
