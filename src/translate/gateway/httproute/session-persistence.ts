/**
 * HTTPRoute rule `sessionPersistence` (GEP-1619, experimental) as the model's `Balancing.session`: a
 * cookie (or header) whose value names the endpoint (proxy/balancing/session-token.ts), so a client
 * stays on one endpoint of the rule's backends. `cookieConfig.lifetimeType: Permanent` gives the cookie
 * `Max-Age` = `absoluteTimeout` (the CRD requires one then); `Session` (the default) gives none.
 * `idleTimeout` and `absoluteTimeout` are enforced by the gateway: the token then carries signed
 * timestamps (proxy/balancing/timed-token.ts), and an ended session is balanced anew. A value
 * the gateway cannot honour (an unknown type, a name that is not a cookie or header token) drops the
 * rule, as any unsupported rule field does.
 */
import type { Route, SessionPersistence } from "../../../model/index.ts";
import type { HTTPRouteRule } from "../../../sources/schema/gateway.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { parseDuration } from "../../common/durations.ts";
import type { RuleInvalid } from "./filters.ts";

/** The cookie or header name when `sessionName` is not given (the spec leaves it to the implementation). */
export const DEFAULT_SESSION_NAME = "gatehouse-session";
/** RFC 9110 token: what both a cookie name and a header field name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

interface RawSessionPersistence {
  sessionName?: unknown;
  absoluteTimeout?: unknown;
  idleTimeout?: unknown;
  type?: unknown;
  cookieConfig?: { lifetimeType?: unknown } | null;
}

/** The rule's session, undefined without one, or why the rule cannot be served. */
export function ruleSession(rule: HTTPRouteRule, i: number): SessionPersistence | undefined | RuleInvalid {
  const raw = rule.sessionPersistence as RawSessionPersistence | null | undefined;
  if (raw === undefined || raw === null) return undefined;
  const at = `spec.rules[${i}].sessionPersistence`;
  const refuse = (message: string): RuleInvalid => ({
    reason: RouteReason.UnsupportedValue,
    message: `${at}.${message}; the rule is not served rather than served without it`,
  });
  if (typeof raw !== "object") return refuse(`: must be an object`);
  const type = raw.type ?? "Cookie";
  if (type !== "Cookie" && type !== "Header")
    return refuse(`type ${JSON.stringify(type)}: only Cookie and Header are supported`);
  const name = raw.sessionName ?? DEFAULT_SESSION_NAME;
  if (typeof name !== "string" || !TOKEN.test(name))
    return refuse(
      `sessionName ${JSON.stringify(name)}: must be a cookie/header name token of 1 to 128 characters`,
    );
  let absoluteMs: number | undefined;
  let idleMs: number | undefined;
  for (const field of ["absoluteTimeout", "idleTimeout"] as const) {
    const v = raw[field];
    if (v === undefined) continue;
    const ms = typeof v === "string" ? parseDuration(v) : undefined;
    if (ms === undefined) return refuse(`${field} ${JSON.stringify(v)}: not a Gateway API duration`);
    if (ms <= 0) return refuse(`${field} ${JSON.stringify(v)}: must be positive`);
    if (field === "absoluteTimeout") absoluteMs = ms;
    else idleMs = ms;
  }
  const lifetime = raw.cookieConfig?.lifetimeType ?? "Session";
  if (lifetime !== "Session" && lifetime !== "Permanent")
    return refuse(`cookieConfig.lifetimeType ${JSON.stringify(lifetime)}: must be Permanent or Session`);
  const timeouts = {
    ...(absoluteMs !== undefined ? { absoluteTimeoutMs: absoluteMs } : {}),
    ...(idleMs !== undefined ? { idleTimeoutMs: idleMs } : {}),
  };
  if (type === "Header") return { type, name, ...timeouts };
  if (lifetime === "Permanent" && absoluteMs === undefined)
    return refuse("cookieConfig.lifetimeType Permanent: needs an absoluteTimeout (the cookie's lifetime)");
  if (lifetime === "Session") return { type, name, ...timeouts };
  const cookie = { maxAgeSeconds: Math.max(1, Math.ceil((absoluteMs as number) / 1000)) };
  return { type, name, cookie, ...timeouts };
}

/** The rule's routes with the session on their Forward action (other actions have no endpoints). */
export function withSession<R extends Route>(routes: readonly R[], session: SessionPersistence): R[] {
  return routes.map((r) =>
    r.action.kind !== "Forward"
      ? r
      : {
          ...r,
          action: {
            ...r.action,
            balancing: {
              algorithm: r.action.balancing?.algorithm ?? "RoundRobin",
              ...r.action.balancing,
              session,
            },
          },
        },
  );
}
