/**
 * One model route as one HTTPRoute rule (its match, filters, action, timeouts and retry), for what
 * Gatehouse's HTTPRoute translation (translate/gateway/httproute/rule.ts) turns back into the same route.
 * What has no HTTPRoute field goes into an HTTPRouteFilter (`ext`, route-filters.ts) or, without one
 * (`--portable`), is left out, the reason pushed to `lost` (a match that has none leaves the route out:
 * undefined); a case-insensitive path pattern is written with a leading `(?i)` (left as a finding with
 * `--portable`: not every implementation reads it). The guards (address lists, authentication, rate limits, client certificates) are
 * the policies' business (policies.ts).
 */
import type { GatewayModel, Route, RouteMatch } from "../model/index.ts";
import { LEADING_IGNORE_CASE } from "../proxy/match/regex/regex.ts";
import type { HTTPRouteMatch } from "../sources/schema/gateway.ts";
import { parseDuration } from "../translate/common/durations.ts";
import { parseMatch } from "../translate/gateway/httproute/rule.ts";
import { backendRefOf } from "./backend-refs.ts";
import { convertBalancing } from "./balancing.ts";
import { convertFilters, redirectFilter } from "./filters.ts";
import { prefixStripForm } from "./regex-prefix.ts";
import type { IngressRouteFilters } from "./route-filters.ts";

type Json = Record<string, unknown>;

/** The rule for `route`, reasons for what it leaves out pushed to `lost`. */
export function convertRule(
  route: Route,
  model: GatewayModel,
  routeNamespace: string,
  lost: string[],
  ext: IngressRouteFilters | undefined,
): Json | undefined {
  const stripped = ext ? undefined : prefixStripForm(route, lost);
  if (stripped) return convertRule(stripped, model, routeNamespace, lost, ext);
  const match = convertMatch(route.match, lost, ext !== undefined);
  const refused = parseMatch(match as HTTPRouteMatch);
  if (typeof refused === "string") {
    lost.push(`the route itself: its match cannot be written in an HTTPRoute (${refused})`);
    return undefined;
  }
  const a = route.action;
  // A redirect forwards nothing, so a rewrite beside it does nothing; Gateway API refuses the pair.
  const kept = a.kind === "Redirect" ? route.filters.filter((f) => f.kind !== "URLRewrite") : route.filters;
  const filters = convertFilters(kept, model, routeNamespace, lost, ext);
  const rule: Json = { matches: [match] };
  if (a.kind === "Redirect") {
    filters.push(redirectFilter(a, lost, ext));
  } else if (a.kind === "DirectResponse") {
    // A rule without backends answers 500 (Gateway API); no other direct answer has a field. The 403 of
    // access annotations Gatehouse does not enforce is the AuthPolicy's deny-every-address (policies.ts).
    if (isRefusal(route))
      lost.push(
        "the 403 of access annotations Gatehouse does not enforce (written as an AuthPolicy denying every address; its body differs)",
      );
    else if (a.status !== 500 || a.body !== undefined)
      lost.push(
        `the direct answer ${a.status}${a.body !== undefined ? " with a body" : ""} (answered 500 instead)`,
      );
  } else {
    const refs: Json[] = [];
    for (const b of a.backends) {
      const ref = b.failStatus === undefined ? backendRefOf(b.backendId, model, routeNamespace) : undefined;
      if (typeof ref !== "object") {
        lost.push(ref ?? `backend ${b.backendId} (answered ${b.failStatus})`);
        continue;
      }
      const problem = model.backends[b.backendId]?.problem;
      if (problem === "ServiceNotFound" || problem === "PortNotFound")
        lost.push(
          `the 503 for backend ${b.backendId} (${problem}): Gateway API answers 500 for a reference that does not resolve`,
        );
      const own = convertFilters(b.filters, model, routeNamespace, lost, ext);
      refs.push({
        ...ref,
        ...(a.backends.length > 1 || b.weight !== 1 ? { weight: b.weight } : {}),
        ...(own.length > 0 ? { filters: own } : {}),
      });
    }
    if (refs.length > 0) rule.backendRefs = refs;
    const session = a.balancing === undefined ? undefined : convertBalancing(a.balancing, lost, durationOf);
    if (session !== undefined) rule.sessionPersistence = session;
  }
  if (filters.length > 0) rule.filters = filters;
  const t = route.timeouts;
  if (t) {
    const timeouts: Json = {};
    if (t.requestMs !== undefined) timeouts.request = durationOf(t.requestMs);
    if (t.backendRequestMs !== undefined) {
      // Gateway API refuses a backendRequest longer than request; the request's limit ends it first anyway.
      const cap = t.requestMs !== undefined && t.requestMs !== 0 && t.backendRequestMs > t.requestMs;
      if (cap)
        lost.push(
          `the backend attempt timeout ${t.backendRequestMs}ms, longer than the request timeout ${t.requestMs}ms (written as ${t.requestMs}ms: Gateway API refuses longer)`,
        );
      timeouts.backendRequest = durationOf(cap ? (t.requestMs as number) : t.backendRequestMs);
    }
    if (Object.keys(timeouts).length > 0) rule.timeouts = timeouts;
    const gaps = [
      t.readGapMs !== undefined ? `read ${t.readGapMs}ms (proxy-read-timeout)` : "",
      t.sendGapMs !== undefined ? `send ${t.sendGapMs}ms (proxy-send-timeout)` : "",
      t.connectMs !== undefined ? `connect ${t.connectMs}ms (proxy-connect-timeout)` : "",
    ].filter(Boolean);
    if (gaps.length > 0)
      lost.push(`the timeouts ${gaps.join(", ")} (Gateway API has request and backendRequest only)`);
  }
  if (route.retry) {
    rule.retry = {
      attempts: route.retry.attempts,
      ...(route.retry.codes.length > 0 ? { codes: [...route.retry.codes] } : {}),
      ...(route.retry.backoffMs > 0 ? { backoff: durationOf(route.retry.backoffMs) } : {}),
    };
  }
  if (route.accessLog === false)
    lost.push("leaving requests out of the access log (enable-access-log: false)");
  else if (route.accessLogSample !== undefined)
    lost.push(`the access-log share of ${route.accessLogSample} (gatehouse.dev/access-log-sample)`);
  if (route.responseBandwidth)
    lost.push(
      `the response bandwidth limit of ${route.responseBandwidth.bytesPerSecond} bytes/s (limit-rate, limit-rate-after)`,
    );
  if (route.requestBodyMaxBytes !== undefined)
    lost.push(`the request body limit of ${route.requestBodyMaxBytes} bytes (proxy-body-size)`);
  if (route.errorPages !== undefined)
    lost.push(
      `the error pages for ${route.errorPages.codes.join(", ")} from ${route.errorPages.backendId} (custom-http-errors, default-backend)`,
    );
  return rule;
}

function convertMatch(m: RouteMatch, lost: string[], flags: boolean): Json {
  const type = m.path.type === "Prefix" ? "PathPrefix" : m.path.type;
  const ignoreCase = m.path.ignoreCase === true;
  if (ignoreCase && !flags)
    lost.push(
      `matching the path pattern ${JSON.stringify(m.path.value)} regardless of case (written without (?i): --portable)`,
    );
  return {
    path: { type, value: ignoreCase && flags ? `${LEADING_IGNORE_CASE}${m.path.value}` : m.path.value },
    ...(m.method ? { method: m.method } : {}),
    ...(m.headers.length > 0
      ? { headers: m.headers.map((h) => ({ type: h.type, name: h.name, value: h.value })) }
      : {}),
    ...(m.queryParams.length > 0
      ? { queryParams: m.queryParams.map((q) => ({ type: q.type, name: q.name, value: q.value })) }
      : {}),
  };
}

/** Milliseconds as a Gateway API Duration (at most 5 digits per unit): `500ms`, `60s`, `1h2m3s4ms`. */
export function durationOf(ms: number): string {
  const whole = Math.round(ms);
  if (whole < 100_000) return whole % 1000 === 0 ? `${whole / 1000}s` : `${whole}ms`;
  const parts: string[] = [];
  let rest = whole;
  for (const [unit, size] of [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  const text = parts.join("");
  // Beyond 99999h a value cannot be written; the longest that can stands in (never reached by real input).
  return parseDuration(text) === whole ? text : "99999h";
}

/** A route that refuses every request with 403 (an Ingress asking for access controls not enforced). */
export function isRefusal(route: Route): boolean {
  return route.action.kind === "DirectResponse" && route.action.status === 403;
}
