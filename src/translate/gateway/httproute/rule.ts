import { isToken } from "../../../model/http-syntax.ts";
import type {
  Backend,
  HeaderMatch,
  PathMatch,
  QueryParamMatch,
  RetryPolicy,
  Route,
  RouteAction,
  RouteMatch,
  RouteTimeouts,
  SourceRef,
  WeightedBackend,
} from "../../../model/index.ts";
import { LEADING_IGNORE_CASE } from "../../../proxy/match/regex/regex.ts";
import type { HTTPRouteMatch, HTTPRouteRule } from "../../../sources/schema/gateway.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { parseDuration } from "../../common/durations.ts";
import { httpRouteMatchName } from "../../common/names.ts";
import { arrayOf, emptyList } from "../../common/objects.ts";
import type { GRPCMethodOrder } from "../grpcroute/method-match.ts";
import { regexProblem } from "../regex-safety.ts";
import { type BackendContext, type RefIssue, resolveBackendRef, weightedBackend } from "./backend-refs.ts";
import { convertFilters, type RuleInvalid } from "./filters.ts";

/** One match of one rule, ready to be placed on virtual hosts (the Route minus nothing). */
export interface RuleEntry extends Route {
  readonly ruleIndex: number;
  readonly matchIndex: number;
  /** A GRPCRoute's entry: what its precedence reads instead of the path (route-precedence.ts). */
  readonly grpc?: GRPCMethodOrder;
}

export interface TranslatedRule {
  readonly entries: RuleEntry[];
  readonly issues: RefIssue[];
  readonly backends: Backend[];
}

/** What a rule needs: backend resolution plus the route it belongs to. */
export interface RuleContext extends BackendContext {
  readonly source: SourceRef;
}

/** Per-rule limits of HTTPRoute v1.6.1 (CRD MaxItems). */
export const ruleLimits = {
  matches: 64,
  filters: 16,
  backendRefs: 16,
  headers: 16,
  queryParams: 16,
} as const;

const methods = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);
const pathChars = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/;

/**
 * One HTTPRoute rule as route entries, one per match (no matches = `PathPrefix /`). Anything invalid in
 * the rule (a bad match, filter, weight, timeout or retry, or a limit exceeded) makes the whole rule
 * invalid: it is dropped and the route reports UnsupportedValue. Invalid backend references do not:
 * they answer 500 and are reported through ResolvedRefs.
 */
export function translateRule(
  rule: HTTPRouteRule,
  i: number,
  routeName: string,
  ctx: RuleContext,
): TranslatedRule | RuleInvalid {
  const field = `spec.rules[${i}]`;
  const bad = (message: string): RuleInvalid => ({
    reason: RouteReason.UnsupportedValue,
    message: `${field}.${message}`,
  });
  const matches = rule.matches && rule.matches.length > 0 ? rule.matches : [{}];
  const backendRefs = arrayOf(rule.backendRefs);
  if (matches.length > ruleLimits.matches) return bad(`matches: at most ${ruleLimits.matches} allowed`);
  if (arrayOf(rule.filters).length > ruleLimits.filters)
    return bad(`filters: at most ${ruleLimits.filters} allowed`);
  if (backendRefs.length > ruleLimits.backendRefs)
    return bad(`backendRefs: at most ${ruleLimits.backendRefs} allowed`);
  const routeMatches: RouteMatch[] = [];
  for (const [j, m] of matches.entries()) {
    const parsed = parseMatch(m);
    if (typeof parsed === "string") return bad(`matches[${j}].${parsed}`);
    routeMatches.push(parsed);
  }
  const prefixMatch = routeMatches.length === 1 && routeMatches[0]?.path.type === "Prefix";
  const filters = convertFilters(rule.filters, `${field}.filters`, ctx, { prefixMatch, allowRedirect: true });
  if ("reason" in filters) return filters;
  const issues = [...filters.issues];
  const backends = [...filters.backends];
  if (filters.redirect && backendRefs.length > 0)
    return bad("backendRefs: must be empty with a RequestRedirect filter");
  const weighted: WeightedBackend[] = [];
  for (const [k, ref] of backendRefs.entries()) {
    const where = `${field}.backendRefs[${k}]`;
    const weight = ref.weight ?? 1;
    if (weight < 0 || weight > 1_000_000)
      return bad(`backendRefs[${k}].weight: ${weight} is not within 0–1000000`);
    const own = convertFilters(ref.filters, `${where}.filters`, ctx, { prefixMatch, allowRedirect: false });
    if ("reason" in own) return own;
    issues.push(...own.issues);
    backends.push(...own.backends);
    const resolved = resolveBackendRef(ref, where, ctx);
    if (resolved.issue) issues.push(resolved.issue);
    if (resolved.backend) backends.push(resolved.backend);
    const entry = weightedBackend(resolved, weight, own.filters.length > 0 ? own.filters : emptyList);
    weighted.push(own.unresolved ? { ...entry, failStatus: 500 } : entry);
  }
  // A filter that did not resolve is never skipped: what it applies to answers 500.
  const action: RouteAction = filters.unresolved
    ? { kind: "DirectResponse", status: 500 }
    : filters.redirect
      ? filters.redirect
      : weighted.some((b) => b.weight > 0)
        ? { kind: "Forward", backends: weighted }
        : { kind: "DirectResponse", status: 500 };
  const timeouts = parseTimeouts(rule.timeouts);
  if (typeof timeouts === "string") return bad(`timeouts: ${timeouts}`);
  const retry = parseRetry(rule.retry);
  if (typeof retry === "string") return bad(`retry: ${retry}`);
  const entries = routeMatches.map(
    (match, j): RuleEntry => ({
      name: httpRouteMatchName(routeName, i, j),
      source: ctx.source,
      ...(rule.name ? { ruleName: rule.name } : {}),
      match,
      filters: filters.filters.length > 0 ? filters.filters : emptyList,
      action,
      ...(timeouts ? { timeouts } : {}),
      ...(retry ? { retry } : {}),
      ruleIndex: i,
      matchIndex: j,
    }),
  );
  return { entries, issues, backends };
}

/** A match as a RouteMatch, or the message (starting with the field) saying why it is not valid. */
export function parseMatch(m: HTTPRouteMatch): RouteMatch | string {
  const path = parsePath(m.path?.type ?? "PathPrefix", m.path?.value ?? "/");
  if (typeof path === "string") return `path: ${path}`;
  if (m.method !== undefined && !methods.has(m.method))
    return `method: "${m.method}" is not a supported HTTP method`;
  if (arrayOf(m.headers).length > ruleLimits.headers) return `headers: at most ${ruleLimits.headers} allowed`;
  if (arrayOf(m.queryParams).length > ruleLimits.queryParams)
    return `queryParams: at most ${ruleLimits.queryParams} allowed`;
  const headers: HeaderMatch[] = [];
  for (const [k, h] of arrayOf(m.headers).entries()) {
    const problem = valueMatchProblem(h);
    if (problem) return `headers[${k}]: ${problem}`;
    const name = h.name.toLowerCase();
    if (headers.some((x) => x.name === name)) continue; // only the first of equivalent names counts
    headers.push({
      type: h.type === "RegularExpression" ? "RegularExpression" : "Exact",
      name,
      value: h.value,
    });
  }
  const queryParams: QueryParamMatch[] = [];
  for (const [k, q] of arrayOf(m.queryParams).entries()) {
    const problem = valueMatchProblem(q);
    if (problem) return `queryParams[${k}]: ${problem}`;
    if (queryParams.some((x) => x.name === q.name)) continue;
    queryParams.push({
      type: q.type === "RegularExpression" ? "RegularExpression" : "Exact",
      name: q.name,
      value: q.value,
    });
  }
  return {
    path,
    ...(m.method ? { method: m.method } : {}),
    headers: headers.length > 0 ? headers : emptyList,
    queryParams: queryParams.length > 0 ? queryParams : emptyList,
  };
}

function valueMatchProblem(v: { type?: string; name: string; value: string }): string | undefined {
  if (!isToken(v.name)) return `name "${v.name}" is not a valid HTTP token`;
  const type = v.type ?? "Exact";
  if (type === "Exact") return v.value === "" ? "value must not be empty" : undefined;
  if (type !== "RegularExpression") return `type "${type}" is not Exact or RegularExpression`;
  const problem = regexProblem(v.value);
  return problem ? `value "${v.value}" ${problem}` : undefined;
}

/** Exact and PathPrefix values checked as the CRD does; a PathPrefix's trailing slash dropped. */
function parsePath(type: string, value: string): PathMatch | string {
  if (value.length > 1024) return "value must be no more than 1024 characters";
  if (type === "RegularExpression") {
    const problem = regexProblem(value);
    if (problem) return `value "${value}" ${problem}`;
    // One form in the model for a case-insensitive path, whichever API said it (Ingress regex paths are).
    return value.startsWith(LEADING_IGNORE_CASE)
      ? { type: "RegularExpression", value: value.slice(LEADING_IGNORE_CASE.length), ignoreCase: true }
      : { type: "RegularExpression", value };
  }
  if (type !== "Exact" && type !== "PathPrefix")
    return `type "${type}" is not Exact, PathPrefix or RegularExpression`;
  if (!value.startsWith("/")) return `value "${value}" must start with "/"`;
  for (const seq of ["//", "/./", "/../", "%2f", "%2F", "#"])
    if (value.includes(seq)) return `value "${value}" must not contain "${seq}"`;
  for (const end of ["/..", "/."])
    if (value.endsWith(end)) return `value "${value}" must not end with "${end}"`;
  if (!pathChars.test(value)) return `value "${value}" has characters not allowed in a path`;
  if (type === "Exact") return { type: "Exact", value };
  const trimmed = value.length > 1 && value.endsWith("/") ? value.slice(0, -1) : value;
  return { type: "Prefix", value: trimmed };
}

function parseTimeouts(t: HTTPRouteRule["timeouts"]): RouteTimeouts | undefined | string {
  if (!t) return undefined;
  const request = t.request !== undefined ? parseDuration(t.request) : undefined;
  const backend = t.backendRequest !== undefined ? parseDuration(t.backendRequest) : undefined;
  if (t.request !== undefined && request === undefined)
    return `request "${t.request}" is not a duration like 10s or 500ms`;
  if (t.backendRequest !== undefined && backend === undefined)
    return `backendRequest "${t.backendRequest}" is not a duration like 10s or 500ms`;
  if (request !== undefined && request !== 0 && backend !== undefined && backend > request) {
    return "backendRequest must not be longer than request";
  }
  if (request === undefined && backend === undefined) return undefined;
  return {
    ...(request !== undefined ? { requestMs: request } : {}),
    ...(backend !== undefined ? { backendRequestMs: backend } : {}),
  };
}

/** Retry: attempts default 1 when the stanza is present (0 disables), backoff default 0 (immediate). */
function parseRetry(r: HTTPRouteRule["retry"]): RetryPolicy | undefined | string {
  if (!r) return undefined;
  const attempts = r.attempts ?? 1;
  if (attempts < 0) return `attempts ${attempts} must not be negative`;
  const codes = arrayOf(r.codes);
  const badCode = codes.find((c) => c < 400 || c > 599);
  if (badCode !== undefined) return `codes: ${badCode} is not within 400–599`;
  const backoffMs = r.backoff !== undefined ? parseDuration(r.backoff) : 0;
  if (backoffMs === undefined) return `backoff "${r.backoff}" is not a duration like 100ms`;
  if (attempts === 0) return undefined;
  return { attempts, codes: [...new Set(codes)].sort((a, b) => a - b), backoffMs };
}
