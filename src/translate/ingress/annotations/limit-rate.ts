/**
 * ingress-nginx rate limit annotations on an Ingress, as the same model a RateLimitPolicy produces:
 * - `limit-rps: N` → N per second, `limit-rpm: N` → N per minute (both may be set: two rules);
 * - `limit-burst-multiplier: M` (default 5, as ingress-nginx) → each rule's burst is N × M;
 * - `limit-allowlist: CIDR,…` (or its older name `limit-whitelist`; the newer wins) → clients never
 *   limited.
 * Keyed by client address (the socket peer: no X-Forwarded-For is trusted), one bucket shared by every
 * path of the Ingress (ingress-nginx's zone is per Ingress). Unlike ingress-nginx, which counts in each
 * replica (so N replicas admit up to N × the limit), the count is shared by all replicas through Redis;
 * if Redis fails, each replica limits at its share (failure mode Local). A bad value is a warning and
 * that annotation is ignored.
 */
import type { Problem, RateLimitRule, SourceRef } from "../../../model/index.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { annotationOf } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { cidrList, type RateLimitSettings } from "../../policies/ratelimit-spec.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";

export interface IngressRateLimit {
  readonly settings?: RateLimitSettings;
  readonly problems: readonly Problem[];
}

export function ingressRateLimit(ingress: Ingress, ref: SourceRef): IngressRateLimit {
  const problems: Problem[] = [];
  const warn = (name: string, why: string) => {
    const message = `annotation ${NGINX_PREFIX}${name}: ${why}; ignored`;
    problems.push(problem(ref, "InvalidAnnotation", message, "warning"));
  };
  const count = (name: string): number | undefined => {
    const raw = annotationOf(ingress, NGINX_PREFIX + name);
    if (raw === undefined) return undefined;
    if (!/^\s*[0-9]{1,9}\s*$/.test(raw) || Number(raw) < 1) {
      warn(name, `"${raw}" must be a whole number of at least 1`);
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
    if (typeof parsed === "string") warn(listName, `entry ${parsed.replace(/^\[\d+\]: /, "")}`);
    else exempt = parsed;
  }
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
