/** The rate limit a route asks for (RateLimitPolicy, ingress-nginx annotations; docs/ratelimit.md). */
import type { SourceRef } from "./source.ts";

/**
 * The rate limit of a route (docs/ratelimit.md). Every rule must admit a request; a request one rule
 * rejects is counted by none (so a client over one limit does not also drain the others). Counting is
 * shared by every gateway replica through Redis when `--redis-url` is set, in-process otherwise.
 */
export interface RouteRateLimit {
  /** The object the limit came from (a RateLimitPolicy or an Ingress), for metrics, logs and statuses. */
  readonly source: SourceRef;
  /** Metric label and log name: `ratelimitpolicy/<ns>/<name>` or `ingress/<ns>/<name>`. */
  readonly policy: string;
  /**
   * Counter scope, part of every bucket key: the policy name plus the route name (a bucket per route,
   * the default) or the policy name alone (`shared`: every route of the policy draws on one bucket).
   */
  readonly bucket: string;
  /** The rules, all of which must admit a request. At least one, unless `invalid` is set (then none). */
  readonly rules: readonly RateLimitRule[];
  /** How the client address (key source `ClientIP`, and `exemptCIDRs`) is found. */
  readonly clientIP: ClientIPSettings;
  /** Clients (by the address `clientIP` finds) never limited or counted (ingress-nginx `limit-whitelist`). */
  readonly exemptCIDRs: readonly string[];
  /**
   * When the shared store (Redis) cannot answer within the command timeout:
   * - `Open`: admit the request (counted as `failed_open`);
   * - `Closed`: answer 503;
   * - `Local`: count in-process at each rule's limit and burst divided by the live replica count.
   * Without `--redis-url` counting is always in-process and this does not apply.
   */
  readonly failureMode: "Open" | "Closed" | "Local";
  /** Dry run: decisions are counted in metrics but every request is admitted and no header is added. */
  readonly shadow: boolean;
  /** Leave out `RateLimit-Policy` and `RateLimit` (a 429 still carries `Retry-After`). */
  readonly hideHeaders: boolean;
  /**
   * Set when the policy (or the Ingress's `limit-*` annotations) cannot be enforced as written: why, as
   * its status or problem says. Such a limit still attaches where a valid one would (never open): every
   * request on its routes is answered 500 and none is forwarded. `rules` is then empty.
   */
  readonly invalid?: string;
}

/** N requests per window, with a burst. Counted by GCRA: one request every `windowSeconds / limit`. */
export interface RateLimitRule {
  /** The rule's name (given, or its index), used in header policy items and bucket keys. */
  readonly name: string;
  /** Requests per window, >= 1. */
  readonly limit: number;
  /** Window length in seconds, >= 1. */
  readonly windowSeconds: number;
  /** Requests admitted at once from an idle bucket, >= 1. Defaults to `limit` (a whole window's quota). */
  readonly burst: number;
  /** What a bucket is per: the values of these sources form the key. Empty: one bucket for everyone. */
  readonly keys: readonly RateLimitKey[];
  /**
   * Clients (by the address `clientIP` finds) this rule alone neither limits nor counts; the limit's
   * other rules still apply to them. Set only where an Ingress's `limit-allowlist` and
   * `global-rate-limit-ignored-cidrs` differ (each exempts from its own family's limit).
   */
  readonly exemptCIDRs?: readonly string[];
}

/**
 * One part of a bucket key. A `Header` or `Claim` the request does not carry is replaced by the client
 * address, so leaving a header out neither escapes the limit nor puts every such client in one bucket.
 * `Header` names are lower-case; `Claim` reads the verified JWT's claims (auth runs first); `Route` is
 * the route name, which keeps buckets per route even when `RouteRateLimit.bucket` is shared.
 */
export type RateLimitKey =
  | {
      /** The client address, as `RouteRateLimit.clientIP` finds it. */
      readonly source: "ClientIP";
    }
  | {
      /** A request header's value. */
      readonly source: "Header";
      /** Lower-case header name. */
      readonly name: string;
    }
  | {
      /** A verified JWT claim's value. */
      readonly source: "Claim";
      /** Claim name; a dotted path reads nested objects. */
      readonly name: string;
    }
  | {
      /** The request path (no query), as matched. */
      readonly source: "Path";
    }
  | {
      /** The request method. */
      readonly source: "Method";
    }
  | {
      /** The matched route's name. */
      readonly source: "Route";
    };

/** Which peers may tell us the client address through X-Forwarded-For. */
export interface ClientIPSettings {
  /**
   * CIDRs of trusted proxies. Starting from the socket peer, while the current hop is a trusted proxy,
   * the next X-Forwarded-For entry from the right is taken; the first untrusted hop is the client. Empty:
   * the socket peer, whatever X-Forwarded-For says.
   */
  readonly trustedProxies: readonly string[];
}
