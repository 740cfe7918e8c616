/**
 * ingress-nginx's global rate limit annotations (removed in controller v1.12.0; old Ingresses still carry
 * them), read as one rule of the Ingress's rate limit, beside `limit-rps`/`limit-rpm` (request-rate.ts):
 * - `global-rate-limit: N` and `global-rate-limit-window: <Go duration>` (both required) → N requests
 *   per window, the seconds truncated as ingress-nginx did (`1m30s` → 90, `1.5s` → 1), with a burst of N;
 * - `global-rate-limit-key` (default `$remote_addr`): the nginx variables in it become the rule's key
 *   sources (`$remote_addr` the client address, `$http_<name>` a request header, `$uri` the path,
 *   `$request_method` the method); text between variables changes no bucket and is dropped, and a key
 *   without a variable is one bucket for everyone, as in ingress-nginx. Other variables are refused;
 * - `global-rate-limit-ignored-cidrs: CIDR,…` → clients this rule neither counts nor limits.
 * ingress-nginx counted one sliding window per Ingress in memcached; Gatehouse counts the rule by GCRA in
 * Redis, in the bucket the Ingress's other limits use (docs/ratelimit.md says how the shapes differ).
 * A value that cannot be used fails closed, as `limit-rps` does; so does a limit without a window or with
 * one under a second, which ingress-nginx silently did not apply.
 */
import type { RateLimitKey, RateLimitRule } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf } from "../../common/objects.ts";
import { cidrList, rateLimitBounds } from "../../policies/ratelimit-spec.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

export const globalLimitNames = [
  "global-rate-limit",
  "global-rate-limit-window",
  "global-rate-limit-key",
  "global-rate-limit-ignored-cidrs",
] as const;

/** The rule's name in bucket keys and RateLimit headers. */
export const globalRuleName = "global";

export interface GlobalRateLimit {
  readonly rule: RateLimitRule;
  /** Clients this rule does not count (the Ingress's other rules still may). */
  readonly ignored: readonly string[];
}

/** How the caller reports: `unparsable` fails the Ingress's limit closed, `warn` only tells. */
export interface GlobalLimitReport {
  unparsable(name: string, why: string): void;
  warn(name: string, why: string): void;
}

/** The global rule, or undefined when `global-rate-limit` is absent or a value is unusable (reported). */
export function globalRateLimit(ingress: Ingress, report: GlobalLimitReport): GlobalRateLimit | undefined {
  const raw = (name: string) => annotationOf(ingress, NGINX_PREFIX + name);
  const rawLimit = raw("global-rate-limit");
  if (rawLimit === undefined) {
    for (const name of globalLimitNames.slice(1))
      if (raw(name) !== undefined)
        report.warn(name, `has no effect without ${NGINX_PREFIX}global-rate-limit (as in ingress-nginx)`);
    return undefined;
  }
  let ok = true;
  const fail = (name: string, why: string) => {
    report.unparsable(name, why);
    ok = false;
  };
  const limit = /^\s*[0-9]{1,10}\s*$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
  if (!(limit >= 1 && limit <= rateLimitBounds.limit))
    fail("global-rate-limit", `"${rawLimit}" must be a whole number from 1 to ${rateLimitBounds.limit}`);
  const rawWindow = raw("global-rate-limit-window");
  const windowSeconds = rawWindow === undefined ? undefined : Math.trunc(goDurationSeconds(rawWindow) ?? -1);
  if (rawWindow === undefined)
    fail(
      "global-rate-limit-window",
      "missing; global-rate-limit needs a window (ingress-nginx applied no limit without one)",
    );
  else if (windowSeconds === undefined || windowSeconds < 1 || windowSeconds > rateLimitBounds.windowSeconds)
    fail(
      "global-rate-limit-window",
      `"${rawWindow}" must be a Go duration of 1s to 366 days, e.g. 10s, 1m, 1h30m (ingress-nginx applied no limit under 1s)`,
    );
  const rawKey = raw("global-rate-limit-key")?.trim();
  const keys = keySources(rawKey === undefined || rawKey === "" ? "$remote_addr" : rawKey);
  if (typeof keys === "string") fail("global-rate-limit-key", `"${rawKey}": ${keys}`);
  const rawIgnored = raw("global-rate-limit-ignored-cidrs");
  let ignored: string[] = [];
  if (rawIgnored !== undefined) {
    const parsed = cidrList(
      rawIgnored
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    );
    if (typeof parsed === "string")
      fail("global-rate-limit-ignored-cidrs", `entry ${parsed.replace(/^\[\d+\]: /, "")}`);
    else ignored = parsed;
  }
  if (!ok || typeof keys === "string" || windowSeconds === undefined) return undefined;
  return { rule: { name: globalRuleName, limit, windowSeconds, burst: limit, keys }, ignored };
}

/** Whether the Ingress carries any `global-rate-limit*` annotation. */
export function hasGlobalLimitAnnotation(ingress: Ingress): boolean {
  return globalLimitNames.some((name) => annotationOf(ingress, NGINX_PREFIX + name) !== undefined);
}

/** What each nginx variable Gatehouse can key by stands for. */
const variableKeys: Readonly<Record<string, RateLimitKey>> = {
  remote_addr: { source: "ClientIP" },
  binary_remote_addr: { source: "ClientIP" },
  uri: { source: "Path" },
  document_uri: { source: "Path" },
  request_method: { source: "Method" },
};
const supported = "$remote_addr, $binary_remote_addr, $http_<header>, $uri, $document_uri, $request_method";

/**
 * The key sources of an nginx key expression (`$var`, `${var}`, literal text), in order, without
 * repeats; or why not. Characters are those ingress-nginx's validation allowed (letters, digits, `-`,
 * `_`, `$`, `{`, `}`).
 */
export function keySources(expr: string): RateLimitKey[] | string {
  if (!/^[A-Za-z0-9_${}-]{1,256}$/.test(expr))
    return "only letters, digits, -, _, $, { and } may make up an nginx variable expression (at most 256)";
  const keys: RateLimitKey[] = [];
  let i = 0;
  while (i < expr.length) {
    if (expr[i] !== "$") {
      i++;
      continue;
    }
    const braced = expr[i + 1] === "{";
    let end = i + (braced ? 2 : 1);
    while (end < expr.length && /[A-Za-z0-9_]/.test(expr[end] as string)) end++;
    const name = expr.slice(i + (braced ? 2 : 1), end).toLowerCase();
    if (name === "" || (braced && expr[end] !== "}")) {
      i++; // a lone `$` (or `${` not closed) is text, as in ingress-nginx's Lua
      continue;
    }
    i = braced ? end + 1 : end;
    const key = variableKey(name);
    if (key === undefined) return `$${name} cannot be keyed on (Gatehouse keys by ${supported})`;
    if (!keys.some((k) => k.source === key.source && keyName(k) === keyName(key))) keys.push(key);
  }
  if (keys.length > rateLimitBounds.keys) return `at most ${rateLimitBounds.keys} different variables`;
  return keys;
}

function variableKey(name: string): RateLimitKey | undefined {
  if (Object.hasOwn(variableKeys, name)) return variableKeys[name];
  // nginx's $http_x_api_client is the X-Api-Client header.
  if (name.startsWith("http_") && name.length > 5)
    return { source: "Header", name: name.slice(5).replaceAll("_", "-") };
  return undefined;
}

function keyName(k: RateLimitKey): string {
  return "name" in k ? k.name : "";
}

const nanosPer: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
/** Go's largest duration (int64 nanoseconds), past which time.ParseDuration fails. */
const maxNanos = 2 ** 63 - 1;

/**
 * Go's `time.ParseDuration` in seconds (`1m30s`, `1.5h`, `500ms`, `0`); undefined where Go fails, and for
 * negative durations (no window is negative).
 */
export function goDurationSeconds(text: string): number | undefined {
  let s = text.trim();
  if (s.length === 0 || s.length > 64) return undefined;
  if (s[0] === "+") s = s.slice(1);
  if (s === "0") return 0;
  let nanos = 0;
  while (s.length > 0) {
    const m = /^([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)/.exec(s);
    if (m === null || (m[1] === "" && (m[2] ?? "") === "")) return undefined;
    const value = Number(`${m[1] || "0"}.${m[2] || "0"}`);
    nanos += value * (nanosPer[m[3] as string] as number);
    if (nanos > maxNanos) return undefined;
    s = s.slice(m[0].length);
  }
  return nanos / 1e9;
}
