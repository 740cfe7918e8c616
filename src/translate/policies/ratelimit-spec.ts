/**
 * The spec of a RateLimitPolicy, judged field by field into the model's rules (the source schema only
 * checks types, so a wrong policy still gets an `Invalid` condition naming the field). Unknown fields are
 * errors: a misspelt `failuremode` must not silently leave the default in force.
 */
import { isToken } from "../../model/http-syntax.ts";
import type { ClientIPSettings, RateLimitKey, RateLimitRule, RouteRateLimit } from "../../model/index.ts";
import { parseCidr } from "../../ratelimit/cidr.ts";

/** Everything of a RouteRateLimit a policy decides; the route adds source, names and bucket. */
export type RateLimitSettings = Pick<
  RouteRateLimit,
  "rules" | "clientIP" | "exemptCIDRs" | "failureMode" | "shadow" | "hideHeaders"
> & { readonly shared: boolean };

export const rateLimitBounds = { rules: 16, keys: 8, limit: 1_000_000_000, windowSeconds: 366 * 86_400 };

const specFields = new Set([
  "targetRefs",
  "rules",
  "shared",
  "clientIP",
  "exempt",
  "failureMode",
  "shadow",
  "hideHeaders",
]);
const ruleFields = new Set(["name", "limit", "window", "burst", "keys"]);
const windowUnits: Record<string, number> = { s: 1, m: 60, min: 60, h: 3600, d: 86_400, day: 86_400 };
const failureModes: Record<string, RouteRateLimit["failureMode"]> = {
  open: "Open",
  closed: "Closed",
  local: "Local",
};
const ruleName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const claimName = /^[A-Za-z0-9_:.\-/]+$/;

/** `10s`, `1m` or `1min`, `1h`, `1d` or `1day` in seconds; undefined when malformed. */
export function parseWindow(text: unknown): number | undefined {
  const m = typeof text === "string" ? /^([1-9][0-9]{0,8})(s|m|min|h|d|day)$/.exec(text.trim()) : null;
  if (!m) return undefined;
  return Number(m[1]) * (windowUnits[m[2] as string] as number);
}

/** `client-ip`, `header:<name>`, `claim:<name>`, `path`, `method`, `route`; a message when unknown. */
export function parseKeySource(text: unknown): RateLimitKey | string {
  if (typeof text !== "string") return "must be a string";
  const fixed: Record<string, RateLimitKey> = {
    "client-ip": { source: "ClientIP" },
    path: { source: "Path" },
    method: { source: "Method" },
    route: { source: "Route" },
  };
  if (Object.hasOwn(fixed, text)) return fixed[text] as RateLimitKey;
  const colon = text.indexOf(":");
  const kind = colon < 0 ? text : text.slice(0, colon);
  const name = colon < 0 ? "" : text.slice(colon + 1);
  if (kind === "header")
    return isToken(name)
      ? { source: "Header", name: name.toLowerCase() }
      : `"${text}": header:<name> needs a valid header name`;
  if (kind === "claim")
    return claimName.test(name) ? { source: "Claim", name } : `"${text}": claim:<name> needs a claim name`;
  return `"${text}" is not a key source (client-ip, header:<name>, claim:<name>, path, method, route)`;
}

/** The settings, or the first problem as `<field>: <why>`. */
export function parseRateLimitSpec(spec: Readonly<Record<string, unknown>>): RateLimitSettings | string {
  const unknown = Object.keys(spec).filter((k) => !specFields.has(k));
  if (unknown.length > 0) return `spec: unknown field(s) ${unknown.map((k) => `"${k}"`).join(", ")}`;
  const rawRules = spec.rules;
  if (!Array.isArray(rawRules) || rawRules.length === 0) return "spec.rules: at least one rule is required";
  if (rawRules.length > rateLimitBounds.rules) return `spec.rules: at most ${rateLimitBounds.rules} allowed`;
  const rules: RateLimitRule[] = [];
  for (const [i, raw] of rawRules.entries()) {
    const rule = parseRule(raw, i, rawRules.length);
    if (typeof rule === "string") return `spec.rules[${i}].${rule}`;
    if (rules.some((r) => r.name === rule.name)) return `spec.rules[${i}].name: "${rule.name}" is used twice`;
    rules.push(rule);
  }
  const clientIP = parseClientIP(spec.clientIP);
  if (typeof clientIP === "string") return `spec.clientIP.${clientIP}`;
  const exempt = cidrList(spec.exempt);
  if (typeof exempt === "string") return `spec.exempt${exempt}`;
  const mode = spec.failureMode ?? "open";
  const failureMode = typeof mode === "string" ? failureModes[mode.toLowerCase()] : undefined;
  if (failureMode === undefined) return `spec.failureMode: "${String(mode)}" must be open, closed or local`;
  for (const flag of ["shared", "shadow", "hideHeaders"] as const)
    if (spec[flag] !== undefined && typeof spec[flag] !== "boolean")
      return `spec.${flag}: must be true or false`;
  return {
    rules,
    clientIP,
    exemptCIDRs: exempt,
    failureMode,
    shared: spec.shared === true,
    shadow: spec.shadow === true,
    hideHeaders: spec.hideHeaders === true,
  };
}

function parseRule(raw: unknown, i: number, count: number): RateLimitRule | string {
  if (raw === null || typeof raw !== "object") return "must be an object";
  const r = raw as Record<string, unknown>;
  const unknown = Object.keys(r).filter((k) => !ruleFields.has(k));
  if (unknown.length > 0) return `unknown field(s) ${unknown.map((k) => `"${k}"`).join(", ")}`;
  const name = r.name ?? (count === 1 ? "default" : `rule-${i}`);
  if (typeof name !== "string" || !ruleName.test(name)) return `name: "${String(name)}" must be a DNS label`;
  const limit = r.limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > rateLimitBounds.limit)
    return `limit: ${String(limit)} must be a whole number from 1 to ${rateLimitBounds.limit}`;
  const windowSeconds = parseWindow(r.window);
  if (windowSeconds === undefined || windowSeconds > rateLimitBounds.windowSeconds)
    return `window: "${String(r.window)}" must be a whole number of s, min (or m), h or day (or d), at most 366 days`;
  const burst = r.burst ?? limit;
  if (typeof burst !== "number" || !Number.isInteger(burst) || burst < 1 || burst > rateLimitBounds.limit)
    return `burst: ${String(burst)} must be a whole number from 1 to ${rateLimitBounds.limit}`;
  const rawKeys = r.keys ?? ["client-ip"];
  if (!Array.isArray(rawKeys) || rawKeys.length > rateLimitBounds.keys)
    return `keys: must be a list of at most ${rateLimitBounds.keys} key sources`;
  const keys: RateLimitKey[] = [];
  for (const [k, text] of rawKeys.entries()) {
    const key = parseKeySource(text);
    if (typeof key === "string") return `keys[${k}]: ${key}`;
    if (!keys.some((x) => JSON.stringify(x) === JSON.stringify(key))) keys.push(key);
  }
  return { name, limit, windowSeconds, burst, keys };
}

function parseClientIP(raw: unknown): ClientIPSettings | string {
  if (raw === undefined) return { trustedProxies: [] };
  if (raw === null || typeof raw !== "object") return "must be an object";
  const unknown = Object.keys(raw).filter((k) => k !== "trustedProxies");
  if (unknown.length > 0) return `unknown field(s) ${unknown.map((k) => `"${k}"`).join(", ")}`;
  const list = cidrList((raw as Record<string, unknown>).trustedProxies);
  return typeof list === "string" ? `trustedProxies${list}` : { trustedProxies: list };
}

/** CIDRs (a bare address is a /32 or /128), or `[i]: why` for the first bad one. */
export function cidrList(raw: unknown): string[] | string {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) return ": must be a list of CIDRs";
  const out: string[] = [];
  for (const [i, c] of raw.entries()) {
    if (typeof c !== "string" || parseCidr(c) === undefined) return `[${i}]: "${String(c)}" is not a CIDR`;
    out.push(c.trim());
  }
  return out;
}
