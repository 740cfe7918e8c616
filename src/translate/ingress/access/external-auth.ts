/**
 * ingress-nginx's external authentication (internal/ingress/annotations/authreq, the `auth_request` location
 * of nginx.tmpl) as the model's `ExternalAuth`:
 * - `auth-url`: the service, an absolute http(s) URL (nginx variables allowed: AUTH_VARIABLES);
 * - `auth-method`: the method sent (GET, HEAD, POST, …); absent: GET, as nginx sends;
 * - `auth-signin` (+ `auth-signin-redirect-param`, default `rd`): a 401 becomes a 302 there;
 * - `auth-response-headers`: the service's headers copied onto the upstream request;
 * - `auth-request-redirect`: X-Auth-Request-Redirect sent to the service;
 * - `auth-cache-key` + `auth-cache-duration` (`200 202 401 5m`, the default): answers kept by key;
 * - `auth-always-set-cookie`: the service's Set-Cookie on refusals too.
 * Never open: where ingress-nginx denies the location (an auth-url or method it cannot read, a response
 * header name outside `[A-Za-z0-9_-]`), the routes fail closed; hop-by-hop and framing names, which would
 * let the service steer the connection, are refused the same way. Where ingress-nginx warns and drops a
 * setting (a bad auth-signin, cache duration), Gatehouse reports it and drops it too: neither opens
 * anything (a 401 stays a 401; answers are not kept).
 */
import { HOP_BY_HOP } from "../../../model/http-syntax.ts";
import type { ExternalAuth, ExternalAuthCache } from "../../../model/index.ts";
import {
  AUTH_CACHE_FAMILIES,
  AUTH_CACHE_VARIABLES,
  AUTH_VARIABLES,
  parseLocationTemplate,
} from "../../../model/location-template.ts";
import { goBool } from "../annotations/route-edits.ts";

export const EXTERNAL_AUTH_ANNOTATIONS = [
  "auth-url",
  "auth-method",
  "auth-signin",
  "auth-signin-redirect-param",
  "auth-response-headers",
  "auth-request-redirect",
  "auth-cache-key",
  "auth-cache-duration",
  "auth-always-set-cookie",
] as const;

/** The service's answer must come within this (ingress-nginx has no annotation for it: its proxy timeouts). */
export const EXTERNAL_AUTH_TIMEOUT_MS = 5000;

const methods = /^(GET|HEAD|POST|PUT|PATCH|DELETE|CONNECT|OPTIONS|TRACE)$/;
const headerName = /^[A-Za-z0-9_-]+$/;
/** Names a service must not set on the upstream request: they frame or steer the connection. */
const forbiddenNames = new Set([...HOP_BY_HOP, "host", "content-length", "proxy-authorization", "expect"]);

/** A name the service may not set on the upstream request (lower-case). */
export function forbiddenResponseHeader(name: string): boolean {
  return forbiddenNames.has(name);
}

interface Reader {
  raw(name: string): string | undefined;
  /** Reports the value; `closed`: the routes fail closed for it. */
  bad(name: string, value: string, why: string, closed: boolean): void;
  /** Reports annotations set without the one that gives them meaning. */
  notApplied(names: readonly string[], why: string): void;
}

/** The Ingress's forward authentication; undefined when it sets no auth-url (others are then reported). */
export function externalAuthOf(r: Reader): ExternalAuth | undefined {
  const url = r.raw("auth-url")?.trim() ?? "";
  if (url === "") {
    const stray = EXTERNAL_AUTH_ANNOTATIONS.slice(1).filter((n) => r.raw(n) !== undefined);
    if (stray.length > 0) r.notApplied(stray, "no auth-url asks for external authentication");
    return undefined;
  }
  const why = templateProblem(url, AUTH_VARIABLES, true);
  if (why !== undefined) r.bad("auth-url", url, `${why}; every path answers 401`, true);
  const method = r.raw("auth-method")?.trim();
  if (method !== undefined && method !== "" && !methods.test(method))
    r.bad("auth-method", method, "not an HTTP method nginx sends; every path answers 401", true);
  let signinURL = r.raw("auth-signin")?.trim();
  if (signinURL === "") signinURL = undefined;
  const signinWhy = signinURL === undefined ? undefined : templateProblem(signinURL, AUTH_VARIABLES, true);
  if (signinWhy !== undefined)
    r.bad("auth-signin", signinURL ?? "", `${signinWhy}; a 401 is passed on as is`, false);
  const param = r.raw("auth-signin-redirect-param")?.trim() || "rd";
  const paramOk = /^[A-Za-z0-9_.~-]+$/.test(param);
  if (!paramOk) r.bad("auth-signin-redirect-param", param, 'not a query parameter name; "rd" is used', false);
  const responseHeaders: string[] = [];
  const listed = r.raw("auth-response-headers") ?? "";
  for (const part of listed.split(",")) {
    const name = part.trim();
    if (name === "") continue;
    if (!headerName.test(name) || forbiddenResponseHeader(name.toLowerCase())) {
      r.bad(
        "auth-response-headers",
        listed,
        `${JSON.stringify(name.slice(0, 60))} cannot be copied onto a request; every path answers 401`,
        true,
      );
      break;
    }
    if (!responseHeaders.includes(name.toLowerCase())) responseHeaders.push(name.toLowerCase());
  }
  const redirect = r.raw("auth-request-redirect")?.trim();
  const redirectWhy = redirect ? templateProblem(redirect, AUTH_VARIABLES, false) : undefined;
  if (redirectWhy !== undefined)
    r.bad("auth-request-redirect", redirect ?? "", `${redirectWhy}; the request URI is sent`, false);
  const always = r.raw("auth-always-set-cookie");
  const alwaysSetCookie = always === undefined ? false : goBool(always.trim());
  if (alwaysSetCookie === undefined)
    r.bad("auth-always-set-cookie", always ?? "", "not a boolean; false is used", false);
  const cache = cacheOf(r);
  return {
    url,
    ...(method ? { method } : {}),
    ...(signinURL !== undefined && signinWhy === undefined ? { signinURL } : {}),
    signinRedirectParam: paramOk ? param : "rd",
    responseHeaders,
    ...(redirect && redirectWhy === undefined ? { requestRedirect: redirect } : {}),
    alwaysSetCookie: alwaysSetCookie === true,
    timeoutMs: EXTERNAL_AUTH_TIMEOUT_MS,
    ...(cache !== undefined ? { cache } : {}),
  };
}

/** Why `text` is not a usable template (an absolute http(s) URL when `url`), or undefined. */
export function templateProblem(
  text: string,
  variables: readonly (typeof AUTH_CACHE_VARIABLES)[number][],
  url: boolean,
): string | undefined {
  const parsed = parseLocationTemplate(text, variables);
  if (!parsed.ok) return parsed.message;
  if (!url) return undefined;
  // Variables stand in as a plain word ($scheme as one it can be): the rest must be an absolute URL.
  const sample = parsed.parts
    .map((p) => ("text" in p ? p.text : p.variable === "scheme" ? "http" : "x"))
    .join("");
  let u: URL;
  try {
    u = new URL(sample);
  } catch {
    return "not an absolute URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "not an http or https URL";
  if (u.username !== "" || u.password !== "") return "must not carry credentials";
  return undefined;
}

/**
 * Whether a variable fills part of the URL's scheme, host or port (before the path): `https://$host/…`.
 * Where the route's host is not one exact name, the client would choose the service (and the sign-in
 * page) with its Host header; auth-policy.ts refuses such a route (fails it closed).
 */
export function variableAuthority(template: string): boolean {
  const parsed = parseLocationTemplate(template, AUTH_VARIABLES);
  if (!parsed.ok) return false;
  let seen = "";
  for (const p of parsed.parts) {
    if ("variable" in p) {
      const rest = seen.includes("://") ? seen.slice(seen.indexOf("://") + 3) : "";
      if (!seen.includes("://") || !/[/?#]/.test(rest)) return true;
      return false;
    }
    seen += p.text;
  }
  return false;
}

/** `auth-cache-key` with `auth-cache-duration`; undefined: answers are not kept. */
function cacheOf(r: Reader): ExternalAuthCache | undefined {
  const key = r.raw("auth-cache-key")?.trim() ?? "";
  const durationText = r.raw("auth-cache-duration");
  if (key === "") {
    if (durationText !== undefined)
      r.bad("auth-cache-duration", durationText, "no auth-cache-key; answers are not kept", false);
    return undefined;
  }
  const parsed = parseLocationTemplate(key, AUTH_CACHE_VARIABLES, AUTH_CACHE_FAMILIES);
  if (!parsed.ok) {
    r.bad("auth-cache-key", key, `${parsed.message}; answers are not kept`, false);
    return undefined;
  }
  const seconds = durationText === undefined ? defaultDuration() : cacheDurations(durationText);
  if (seconds === undefined) {
    r.bad(
      "auth-cache-duration",
      durationText ?? "",
      'not "<status>… <time>" (e.g. "200 202 401 5m"); "200 202 401 5m" is used',
      false,
    );
    return { key, seconds: defaultDuration() };
  }
  return { key, seconds };
}

function defaultDuration(): Record<string, number> {
  return { "200": 300, "202": 300, "401": 300 };
}

const units: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * nginx `proxy_cache_valid` lines, comma-separated: `[status …] time` (`200 202 10m, 401 30s`); a line with
 * no status keeps 200, 301 and 302, as nginx. Times in s, m, h or d (ms and longer units are refused).
 */
export function cacheDurations(text: string): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const line of text.split(",")) {
    const words = line
      .trim()
      .split(/\s+/)
      .filter((w) => w !== "");
    if (words.length === 0) continue;
    const time = /^(\d{1,7})([smhd])$/.exec(words.at(-1) ?? "");
    if (time === null) return undefined;
    const seconds = Number(time[1]) * (units[time[2] as string] as number);
    const statuses = words.slice(0, -1);
    if (statuses.some((s) => !/^[1-5]\d\d$/.test(s))) return undefined;
    for (const s of statuses.length > 0 ? statuses : ["200", "301", "302"]) out[s] = seconds;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
