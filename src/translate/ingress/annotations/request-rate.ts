/**
 * ingress-nginx rate limit annotations on an Ingress, as the same model a RateLimitPolicy produces:
 * - `limit-rps: N` → N per second, `limit-rpm: N` → N per minute (both may be set: two rules);
 * - `limit-burst-multiplier: M` (default 5, as ingress-nginx) → each rule's burst is N × M;
 * - `limit-allowlist: CIDR,…` (or its older name `limit-whitelist`; the newer wins) → clients never
 *   limited;
 * - the `global-rate-limit*` annotations (global-rate-limit.ts) → one more rule, `global`, with its own
 *   key and its own exempt clients (`global-rate-limit-ignored-cidrs`), as ingress-nginx ran both limits
 *   side by side: whichever refuses first answers.
 * `limit-*` rules are keyed by client address (the socket peer: no X-Forwarded-For is trusted), and
 * every rule draws on one bucket shared by every path of the Ingress (ingress-nginx's zone, and its
 * global counter, are per Ingress). Unlike ingress-nginx, which counts `limit-*` in each replica (so N
 * replicas admit up to N × the limit), the count is shared by all replicas through Redis;
 * if Redis fails, each replica limits at its share (failure mode Local). A value that cannot be parsed
 * fails closed: an error, and every route of the Ingress carries a limit marked invalid (it answers 500).
 * `--allow-unenforced-annotations` does not change that: it is about annotations Gatehouse does not
 * implement, and these it does; a wrong value is fixed by correcting it.
 */
import type { Problem, RateLimitRule, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { sameMembers } from "../../common/sort.ts";
import { cidrList, type RateLimitSettings } from "../../policies/ratelimit-spec.ts";
import { globalRateLimit, hasGlobalLimitAnnotation } from "./global-rate-limit.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { RESPONSE_BANDWIDTH_ANNOTATIONS } from "./response-bandwidth.ts";

export interface IngressRateLimit {
  /** The limit the annotations ask for (undefined: none, or `invalid`). */
  readonly settings?: RateLimitSettings;
  /** Set when a rate limit annotation's value cannot be used: why, for the routes' invalid limit (fail closed). */
  readonly invalid?: string;
  readonly problems: readonly Problem[];
}

export function ingressRateLimit(ingress: Ingress, ref: SourceRef): IngressRateLimit {
  const problems: Problem[] = [];
  const errors: string[] = [];
  const unparsable = (name: string, why: string) => {
    const error = `annotation ${NGINX_PREFIX}${name}: ${why}`;
    errors.push(error);
    const message = `${error}; the Ingress's routes fail closed (500) unless a RateLimitPolicy applies to them`;
    problems.push(problem(ref, "InvalidAnnotation", message));
  };
  const warn = (name: string, why: string) =>
    problems.push(problem(ref, "InvalidAnnotation", `annotation ${NGINX_PREFIX}${name}: ${why}`, "warning"));
  const count = (name: string): number | undefined => {
    const raw = annotationOf(ingress, NGINX_PREFIX + name);
    if (raw === undefined) return undefined;
    if (!/^\s*[0-9]{1,9}\s*$/.test(raw) || Number(raw) < 1) {
      unparsable(name, `"${raw}" must be a whole number of at least 1`);
      return undefined;
    }
    return Number(raw);
  };
  const rps = count("limit-rps");
  const rpm = count("limit-rpm");
  const multiplier = count("limit-burst-multiplier") ?? 5;
  const listName =
    annotationOf(ingress, `${NGINX_PREFIX}limit-allowlist`) !== undefined
      ? "limit-allowlist"
      : "limit-whitelist";
  const rawList = annotationOf(ingress, NGINX_PREFIX + listName);
  let exempt: string[] = [];
  if (rawList !== undefined) {
    const parts = rawList
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const parsed = cidrList(parts);
    if (typeof parsed === "string") unparsable(listName, `entry ${parsed.replace(/^\[\d+\]: /, "")}`);
    else exempt = parsed;
  }
  const globalLimit = globalRateLimit(ingress, { unparsable, warn });
  if (errors.length > 0) return { invalid: errors.join("; "), problems };
  if (rps === undefined && rpm === undefined && globalLimit === undefined) return { problems };
  const rule = (name: string, limit: number, windowSeconds: number): RateLimitRule => ({
    name,
    limit,
    windowSeconds,
    burst: limit * multiplier,
    keys: [{ source: "ClientIP" }],
  });
  const local = [
    ...(rps !== undefined ? [rule("rps", rps, 1)] : []),
    ...(rpm !== undefined ? [rule("rpm", rpm, 60)] : []),
  ];
  // ingress-nginx's allowlist exempts from `limit-*` only, its ignored CIDRs from the global limit only:
  // one list for the whole limit where only one family is set or both lists agree, else one per rule.
  const ignored = globalLimit?.ignored ?? [];
  const perRule = local.length > 0 && globalLimit !== undefined && !sameMembers(exempt, ignored);
  const own = (r: RateLimitRule, list: readonly string[]) =>
    list.length > 0 ? { ...r, exemptCIDRs: list } : r;
  const rules: RateLimitRule[] = [
    ...local.map((r) => (perRule ? own(r, exempt) : r)),
    ...(globalLimit ? [perRule ? own(globalLimit.rule, ignored) : globalLimit.rule] : []),
  ];
  const settings: RateLimitSettings = {
    rules,
    clientIP: { trustedProxies: [] },
    exemptCIDRs: perRule ? [] : local.length > 0 ? exempt : ignored,
    failureMode: "Local",
    shared: true,
    shadow: false,
    hideHeaders: false,
  };
  return { settings, problems };
}

/** Whether the Ingress carries any annotation `ingressRateLimit` reads. */
export function hasLimitAnnotation(ingress: Ingress): boolean {
  return rateLimitAnnotationKinds(ingress).length > 0;
}

/** The rate limit annotations the Ingress carries, as words for a message (own-guards.ts). */
export function rateLimitAnnotationKinds(ingress: Ingress): string[] {
  const out: string[] = [];
  const annotations = ingress.metadata?.annotations;
  if (annotations === undefined || annotations === null) return out;
  if (Object.keys(annotations).some((key) => key.startsWith(`${NGINX_PREFIX}limit-`) && !bandwidthKey(key)))
    out.push("limit-* annotations");
  if (hasGlobalLimitAnnotation(ingress)) out.push("global-rate-limit annotations");
  return out;
}

/** `limit-rate` and `limit-rate-after` pace responses (response-bandwidth.ts): no access control. */
function bandwidthKey(key: string): boolean {
  return (RESPONSE_BANDWIDTH_ANNOTATIONS as readonly string[]).includes(key.slice(NGINX_PREFIX.length));
}
