/**
 * ingress-nginx's upstream time limits and retries (internal/ingress/annotations/proxy in its code; values
 * are whole seconds, as its parser reads them with strconv.Atoi):
 * - `proxy-read-timeout: N` → nginx `proxy_read_timeout`, which bounds the wait for the response head and
 *   then every gap between two reads: the route's per-attempt limit and its read gap;
 * - `proxy-send-timeout: N` → nginx `proxy_send_timeout`: the longest the backend may take no request byte;
 * - `proxy-next-upstream: error timeout http_502 …` with `-tries` (default 3, counting the first try;
 *   0 = as many as allowed, 10 here) and `-timeout` (seconds over all tries, 0 = none): the route's retry
 *   policy. `error` and `timeout` are ingress-nginx's defaults when only `-tries` or `-timeout` is set;
 *   `off` turns retries off. Gatehouse retries a connection failure whenever it retries at all, and never
 *   a request with a body (it was streamed: nothing to send again), so `error` is implied and
 *   `non_idempotent` only lets methods such as POST without a body be retried (which Gatehouse does
 *   anyway); `invalid_header` is accepted and does nothing more (an unreadable answer is a 502, not retried).
 */
import type { RetryPolicy, RouteTimeouts } from "../../../model/index.ts";
import {
  type AnnotationFamily,
  type AnnotationReader,
  type RouteEdit,
  secondsAnnotation,
} from "./route-edits.ts";

const NEXT_UPSTREAM_TOKENS: Readonly<Record<string, number | null>> = {
  error: null,
  timeout: 504,
  invalid_header: null,
  http_500: 500,
  http_502: 502,
  http_503: 503,
  http_504: 504,
  http_403: 403,
  http_404: 404,
  http_429: 429,
  non_idempotent: null,
};

/** ingress-nginx's default `proxy-next-upstream-tries`. */
const DEFAULT_TRIES = 3;
/** What `proxy-next-upstream-tries: 0` (nginx: no limit) becomes: tries, the first included. */
const UNLIMITED_TRIES = 10;

function tries(r: AnnotationReader): number | undefined {
  const raw = r.raw("proxy-next-upstream-tries");
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (!/^[0-9]{1,3}$/.test(v))
    return r.bad("proxy-next-upstream-tries", raw, "must be a whole number (0: no limit)");
  return Number(v) === 0 ? UNLIMITED_TRIES : Math.min(Number(v), UNLIMITED_TRIES);
}

/** The retry codes `proxy-next-upstream` asks for; null: `off`; undefined: not set or refused. */
function nextUpstream(r: AnnotationReader): number[] | null | undefined {
  const raw = r.raw("proxy-next-upstream");
  if (raw === undefined) return undefined;
  const tokens = raw.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) return r.bad("proxy-next-upstream", raw, "names no condition");
  if (tokens.includes("off"))
    return tokens.length === 1 ? null : r.bad("proxy-next-upstream", raw, "off goes alone");
  const codes = new Set<number>();
  for (const t of tokens) {
    if (!Object.hasOwn(NEXT_UPSTREAM_TOKENS, t))
      return r.bad(
        "proxy-next-upstream",
        raw,
        `"${t}" is not one of ${Object.keys(NEXT_UPSTREAM_TOKENS).join(", ")}, off`,
      );
    const code = NEXT_UPSTREAM_TOKENS[t];
    if (code !== null && code !== undefined) codes.add(code);
  }
  return [...codes].sort((a, b) => a - b);
}

function retryPolicy(r: AnnotationReader): { retry?: RetryPolicy; requestMs?: number } {
  const codes = nextUpstream(r);
  const n = tries(r);
  const overall = secondsAnnotation(r, "proxy-next-upstream-timeout", 0);
  if (codes === undefined && n === undefined && overall === undefined) return {};
  const within = overall !== undefined && overall > 0 ? { requestMs: overall * 1000 } : {};
  if (codes === null) return within;
  const retry: RetryPolicy = {
    attempts: Math.max(0, (n ?? DEFAULT_TRIES) - 1),
    codes: codes ?? [504],
    backoffMs: 0,
  };
  return { retry, ...within };
}

export const proxyTimeouts: AnnotationFamily = {
  names: [
    "proxy-read-timeout",
    "proxy-send-timeout",
    "proxy-next-upstream",
    "proxy-next-upstream-tries",
    "proxy-next-upstream-timeout",
  ],
  read(r): RouteEdit | undefined {
    const read = secondsAnnotation(r, "proxy-read-timeout", 1);
    const send = secondsAnnotation(r, "proxy-send-timeout", 1);
    const { retry, requestMs } = retryPolicy(r);
    const timeouts: RouteTimeouts = {
      ...(read !== undefined ? { backendRequestMs: read * 1000, readGapMs: read * 1000 } : {}),
      ...(send !== undefined ? { sendGapMs: send * 1000 } : {}),
      ...(requestMs !== undefined ? { requestMs } : {}),
    };
    if (Object.keys(timeouts).length === 0 && retry === undefined) return undefined;
    return {
      ...(Object.keys(timeouts).length > 0 ? { timeouts } : {}),
      ...(retry !== undefined ? { retry } : {}),
    };
  },
};
