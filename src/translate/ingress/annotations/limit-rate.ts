/**
 * ingress-nginx rate limit annotations on an Ingress, as the same model a RateLimitPolicy produces:
 * - `limit-rps: N` → N per second, `limit-rpm: N` → N per minute (both may be set: two rules);
 * - `limit-burst-multiplier: M` (default 5, as ingress-nginx) → each rule's burst is N × M;
 * - `limit-allowlist: CIDR,…` (or its older name `limit-whitelist`; the newer wins) → clients never
 *   limited.
 * Keyed by client address (the socket peer: no X-Forwarded-For is trusted), one bucket shared by every
 * path of the Ingress (ingress-nginx's zone is per Ingress). Unlike ingress-nginx, which counts in each
 * replica (so N replicas admit up to N × the limit), the count is shared by all replicas through Redis;
 * if Redis fails, each replica limits at its share (failure mode Local). A value that cannot be parsed
 * fails closed: an error, and every route of the Ingress carries a limit marked invalid (it answers 500).
 * `--allow-unenforced-annotations` does not change that: it is about annotations Gatehouse does not
 * implement, and these it does; a wrong value is fixed by correcting it.
 */
import type { Problem, RateLimitRule, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { cidrList, type RateLimitSettings } from "../../policies/ratelimit-spec.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

export interface IngressRateLimit {
  /** The limit the annotations ask for (undefined: none, or `invalid`). */
  readonly settings?: RateLimitSettings;
  /** Set when a `limit-*` value cannot be parsed: why, for the routes' invalid limit (fail closed). */
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
  if (errors.length > 0) return { invalid: errors.join("; "), problems };
  if (rps === undefined && rpm === undefined) return { problems };
  const rule = (name: string, limit: number, windowSeconds: number): RateLimitRule => ({
    name,
    limit,
    windowSeconds,
    burst: limit * multiplier,
    keys: [{ source: "ClientIP" }],
  });
  const rules = [
    ...(rps !== undefined ? [rule("rps", rps, 1)] : []),
    ...(rpm !== undefined ? [rule("rpm", rpm, 60)] : []),
  ];
  const settings: RateLimitSettings = {
    rules,
    clientIP: { trustedProxies: [] },
    exemptCIDRs: exempt,
    failureMode: "Local",
    shared: true,
    shadow: false,
    hideHeaders: false,
  };
  return { settings, problems };
}

/** Whether the Ingress carries any `limit-*` annotation (only those are read by `ingressRateLimit`). */
export function hasLimitAnnotation(ingress: Ingress): boolean {
  const annotations = ingress.metadata?.annotations;
  if (annotations === undefined || annotations === null) return false;
  for (const key of Object.keys(annotations)) if (key.startsWith(`${NGINX_PREFIX}limit-`)) return true;
  return false;
}
