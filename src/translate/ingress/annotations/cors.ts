/**
 * ingress-nginx's CORS annotations (internal/ingress/annotations/cors in its code, the "CORS" block of
 * its nginx.tmpl), as a CORS filter in the `IngressNginx` style on every route of the Ingress.
 *
 * What ingress-nginx does: nothing unless `enable-cors` is true (a Go boolean: true, True, TRUE, t, T,
 * 1); the other six alone do nothing. Then, for a request whose Origin is allowed (with the origin `*`:
 * every request, Origin or not), it sets Access-Control-Allow-Origin (the request's Origin, or `*`),
 * -Allow-Credentials (`true`, left out when false), -Allow-Methods, -Allow-Headers, -Expose-Headers (when
 * set) and -Max-Age on the response, and answers any OPTIONS itself with 204 and no body. A request from
 * another origin passes untouched. Defaults: origin `*`, methods `GET, PUT, POST, DELETE, PATCH,
 * OPTIONS`, headers `DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,
 * Content-Type,Range,Authorization`, credentials true, max-age 1728000 (20 days), nothing exposed.
 * Values are comma-separated lists; an origin is `scheme://host[:port]`, `scheme://*.host[:port]` (the
 * `*` is one host label), `null` or `*` (which, anywhere in the list, allows every origin). A setting
 * whose value fails its check falls back to its default; an origin entry without a scheme is skipped.
 *
 * Here: the same, each refused value an InvalidAnnotation problem. Where Gatehouse differs:
 * - a bad origin entry is left out and the others kept; when none is left, no origin is allowed.
 *   ingress-nginx replaces the whole list by its default `*` when one entry has a character its check
 *   refuses (a trailing slash, an upper-case scheme): a typo would open the Ingress to every origin;
 * - a preflight (OPTIONS with Origin and Access-Control-Request-Method) from a foreign origin is answered
 *   204 without CORS headers instead of being passed to the backend: the browser's outcome is the same,
 *   and preflights then never meet the backend unauthenticated (src/proxy/request/guards.ts);
 * - a list item with a space inside (`GET POST`, `X Token`), which ingress-nginx would send as is, is
 *   refused; lists are sent as `a, b` whatever the spacing written;
 * - an echoed origin adds `Vary: Origin`, so that caches keep one answer per origin; the 204 has no
 *   Content-Type (ingress-nginx sends text/plain);
 * - a negative cors-max-age (no meaning in the Fetch standard) is refused.
 */
import type { CORSFilter } from "../../../model/index.ts";
import { type AnnotationFamily, type AnnotationReader, goBool, type RouteEdit } from "./route-edits.ts";

const DEFAULT_METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"];
const DEFAULT_HEADERS = [
  "DNT",
  "Keep-Alive",
  "User-Agent",
  "X-Requested-With",
  "If-Modified-Since",
  "Cache-Control",
  "Content-Type",
  "Range",
  "Authorization",
];
const DEFAULT_MAX_AGE = 1_728_000;

/** ingress-nginx's per-entry origin check (corsOriginRegex), with a host required. */
const ORIGIN = /^(?:[a-z]+:\/\/(?:\*\.)?[A-Za-z0-9.-]+(?::\d{1,5})?|null)$/;
/** Its corsMethodsRegex, one item at a time. */
const METHOD = /^[A-Za-z]+$/;
/** Its parser.HeadersVariable, one item at a time. */
const HEADER = /^[A-Za-z0-9_-]+$/;
/** Its corsExposeHeadersRegex, one item at a time. */
const EXPOSED = /^(?:[A-Za-z0-9_-]+|\*)$/;

/** The raw value, undefined when absent or blank (ingress-nginx reads a blank value as unset). */
function value(r: AnnotationReader, name: string): string | undefined {
  const raw = r.raw(name);
  return raw === undefined || raw.trim() === "" ? undefined : raw;
}

/** `otherwise` completes the refusal: what is done instead. */
function bool(r: AnnotationReader, name: string, fallback: boolean, otherwise: string): boolean {
  const raw = value(r, name);
  if (raw === undefined) return fallback;
  const v = goBool(raw);
  if (v !== undefined) return v;
  r.bad(name, raw, `must be "true" or "false"; ${otherwise}`);
  return fallback;
}

/** The allowed origins: bad entries are reported and left out, never widened to `*`. */
function origins(r: AnnotationReader): string[] {
  const name = "cors-allow-origin";
  const raw = value(r, name);
  if (raw === undefined) return ["*"];
  const out: string[] = [];
  for (const item of raw.split(",")) {
    const o = item.trim();
    if (o === "") continue;
    if (o === "*") return ["*"];
    if (ORIGIN.test(o)) out.push(o);
    else
      r.bad(
        name,
        o,
        "not an origin (scheme://host[:port], scheme://*.host[:port], null or *); the other origins are kept",
      );
  }
  return out;
}

/** A comma-separated list whose every item passes `item`; otherwise the default (reported). */
function list(
  r: AnnotationReader,
  name: string,
  item: RegExp,
  what: string,
  fallback: readonly string[],
  otherwise: string,
): readonly string[] {
  const raw = value(r, name);
  if (raw === undefined) return fallback;
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const wrong = items.find((s) => !item.test(s));
  if (wrong === undefined) return items;
  r.bad(name, raw, `${JSON.stringify(wrong)} is not ${what}; ${otherwise}`);
  return fallback;
}

function maxAge(r: AnnotationReader): number {
  const name = "cors-max-age";
  const raw = value(r, name);
  if (raw === undefined) return DEFAULT_MAX_AGE;
  const v = raw.trim();
  if (/^[0-9]{1,10}$/.test(v)) return Number(v);
  r.bad(name, raw, `must be a whole number of seconds; ingress-nginx's default ${DEFAULT_MAX_AGE} is used`);
  return DEFAULT_MAX_AGE;
}

export const corsFamily: AnnotationFamily = {
  names: [
    "enable-cors",
    "cors-allow-origin",
    "cors-allow-methods",
    "cors-allow-headers",
    "cors-expose-headers",
    "cors-allow-credentials",
    "cors-max-age",
  ],
  read(r): RouteEdit | undefined {
    if (!bool(r, "enable-cors", false, "CORS stays off")) return undefined;
    const filter: CORSFilter = {
      kind: "CORS",
      allowOrigins: origins(r),
      allowMethods: list(
        r,
        "cors-allow-methods",
        METHOD,
        "a method (letters only)",
        DEFAULT_METHODS,
        `ingress-nginx's default ${DEFAULT_METHODS.join(", ")} is used`,
      ),
      allowHeaders: list(
        r,
        "cors-allow-headers",
        HEADER,
        "a header name (letters, digits, - and _)",
        DEFAULT_HEADERS,
        "ingress-nginx's default list (DNT, Keep-Alive, … Authorization) is used",
      ),
      exposeHeaders: list(
        r,
        "cors-expose-headers",
        EXPOSED,
        "a header name (letters, digits, - and _) or *",
        [],
        "no header is exposed",
      ),
      allowCredentials: bool(r, "cors-allow-credentials", true, "ingress-nginx's default true is used"),
      maxAgeSeconds: maxAge(r),
      style: "IngressNginx",
    };
    return { filters: [filter] };
  },
};
