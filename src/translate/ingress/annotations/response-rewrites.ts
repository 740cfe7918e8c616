/**
 * ingress-nginx's rewrites of the backend's redirects and cookies (internal/ingress/annotations/proxy in
 * its code; nginx.tmpl writes them into each location), as one ResponseRewrite filter on the Ingress's
 * forwarding routes (proxy/filters/response-rewrite.ts applies it):
 * - `proxy-redirect-from: F` with `proxy-redirect-to: T` → `proxy_redirect F T`: a Location (and the URL
 *   in a Refresh) starting with F gets T in its place. ingress-nginx's default for both is `off`
 *   (`proxy_redirect off`: passed on as sent, which is what Gatehouse does without them). `F` = `off`
 *   or `default` writes `proxy_redirect off|default` and T is ignored; `default` replaces the
 *   `proxy_pass` URL (`http://upstream_balancer/…`), which no backend sends, so it changes nothing here
 *   either. F set with T `off` (or absent) writes no proxy_redirect at all. Those halves that do nothing
 *   in ingress-nginx are reported here (InvalidAnnotation), not silently dropped.
 * - `proxy-cookie-domain: "FROM TO"` → `proxy_cookie_domain FROM TO`, `proxy-cookie-path: "FROM TO"` →
 *   `proxy_cookie_path FROM TO` (`off`, the default: no rewrite).
 * The values are taken with ingress-nginx's validators' characters (URLIsValidRegex for the redirect and
 * path values, its cookieDomainRegex for the domain: no `$`, so no nginx variables reach nginx). nginx's
 * regular-expression forms (a first value starting with `~`) are refused: they would need captures that
 * the validators never let reach the second value. Values nginx could not load (extra words, one word)
 * are refused too.
 * Gateway-made answers (a redirect annotation's) are not the backend's, so they are left alone, as
 * nginx's `return` is never rewritten by proxy_redirect. Where Gatehouse differs: a Location rewritten to
 * a path (`T` = `/…`) stays relative; nginx with ingress-nginx's default `absolute_redirect on` would
 * prefix it with the scheme and Host (ingress-nginx's `relative-redirects: true` gives what Gatehouse does).
 */
import type { Filter, ResponseRewriteFilter, Route, ValueReplacement } from "../../../model/index.ts";
import type { AnnotationFamily, AnnotationReader, RouteEdit } from "./route-edits.ts";

/** ingress-nginx's URLIsValidRegex characters (alphaNumericChars and `,:?&=`). */
const URL_VALUE = /^[-._~a-zA-Z0-9/:,?&=]+$/;
/** ingress-nginx's cookieDomainChars. */
const DOMAIN_VALUE = /^[-._~a-zA-Z0-9/:]+$/;
const NO_REGEX = "nginx's regular-expression form (a leading `~`) is not supported, only plain text";

export const responseRewriteFamily: AnnotationFamily = {
  names: ["proxy-redirect-from", "proxy-redirect-to", "proxy-cookie-domain", "proxy-cookie-path"],
  read(r): RouteEdit | undefined {
    const redirect = redirectRule(r);
    const cookieDomain = cookieRule(r, "proxy-cookie-domain", DOMAIN_VALUE);
    const cookiePath = cookieRule(r, "proxy-cookie-path", URL_VALUE);
    if (redirect === undefined && cookieDomain === undefined && cookiePath === undefined) return undefined;
    const filter: ResponseRewriteFilter = {
      kind: "ResponseRewrite",
      ...(redirect !== undefined ? { redirect } : {}),
      ...(cookieDomain !== undefined ? { cookieDomain } : {}),
      ...(cookiePath !== undefined ? { cookiePath } : {}),
    };
    return { perRoute: (route) => withFilter(route, filter) };
  },
};

/** Only forwarded answers are the backend's (a route answering a redirect itself is left as it is). */
function withFilter(route: Route, filter: Filter): Route {
  if (route.action.kind !== "Forward") return route;
  return { ...route, filters: [...route.filters, filter] };
}

/** ingress-nginx's string parser calls an empty value missing (its default, `off`, applies). */
function value(r: AnnotationReader, name: string): { raw: string; v: string } | undefined {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  return { raw, v: raw.trim() };
}

function redirectRule(r: AnnotationReader): ValueReplacement | undefined {
  const from = value(r, "proxy-redirect-from");
  const to = value(r, "proxy-redirect-to");
  const fromOff = from === undefined || from.v === "off" || from.v === "default";
  const toOff = to === undefined || to.v === "off";
  if (fromOff) {
    if (!toOff) r.bad("proxy-redirect-to", to.raw, noEffect("proxy-redirect-from", from?.v));
    return undefined;
  }
  const f = urlWord(r, "proxy-redirect-from", from.raw, from.v, true);
  if (toOff) {
    if (f !== undefined) r.bad("proxy-redirect-from", from.raw, noEffect("proxy-redirect-to", to?.v));
    return undefined;
  }
  const t = urlWord(r, "proxy-redirect-to", to.raw, to.v, false);
  return f === undefined || t === undefined ? undefined : { from: f, to: t };
}

function noEffect(other: string, otherValue: string | undefined): string {
  const shown = otherValue === undefined ? "not set" : `"${otherValue}"`;
  return `does nothing with ${other} ${shown} (ingress-nginx then writes no rewrite either)`;
}

/** One word of URL characters; a first word (`pattern`) starting with `~` is nginx's regex form. */
function urlWord(
  r: AnnotationReader,
  name: string,
  raw: string,
  v: string,
  pattern: boolean,
): string | undefined {
  if (/\s/.test(v)) return r.bad(name, raw, "must be one value without spaces (nginx takes one here)");
  if (pattern && v.startsWith("~")) return r.bad(name, raw, NO_REGEX);
  if (!URL_VALUE.test(v))
    return r.bad(name, raw, "may only hold letters, digits and -._~/:,?&= (as ingress-nginx's validator)");
  return v;
}

/** `off`, or `FROM TO` of the allowed characters. */
function cookieRule(r: AnnotationReader, name: string, chars: RegExp): ValueReplacement | undefined {
  const given = value(r, name);
  if (given === undefined || given.v === "off") return undefined;
  const words = given.v.split(/\s+/);
  if (words.length !== 2) return r.bad(name, given.raw, 'must be "off" or two values: "FROM TO"');
  let [from = "", to = ""] = words;
  if (from.startsWith("~")) return r.bad(name, given.raw, NO_REGEX);
  if (!chars.test(from) || !chars.test(to)) {
    const allowed = chars === DOMAIN_VALUE ? "-._~/:" : "-._~/:,?&=";
    return r.bad(
      name,
      given.raw,
      `may only hold letters, digits and ${allowed} (as ingress-nginx's validator)`,
    );
  }
  if (chars === DOMAIN_VALUE) {
    // nginx drops one leading dot of both (a cookie's own leading dot is kept when it matches).
    if (from.startsWith(".")) from = from.slice(1);
    if (to.startsWith(".")) to = to.slice(1);
    if (from === "") return r.bad(name, given.raw, "the domain to replace is empty");
  }
  return { from, to };
}
