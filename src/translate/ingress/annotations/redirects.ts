/**
 * ingress-nginx's route-level redirects (internal/ingress/annotations/redirect in its code), as the action
 * of every route of the Ingress in place of the backend:
 * - `permanent-redirect: <url>` → nginx `return <code> <url>;` in each location, code
 *   `permanent-redirect-code` (default 301);
 * - `temporal-redirect: <url>` likewise with `temporal-redirect-code` (default 302); when both are set the
 *   temporal one wins and the permanent one is not read (ingress-nginx's parser returns first);
 * - `relative-redirects` (nginx `absolute_redirect off`) is read and changes nothing: it only touches the
 *   redirects nginx builds from a relative URI, and every redirect ingress-nginx issues (these, app-root,
 *   from-to-www, ssl-redirect) names an absolute URL, as Gatehouse's do.
 * The URL is sent as written, the query not added (nginx's `return` with a URL). nginx expands variables in
 * it; Gatehouse fills the common ones by plain substitution (`$request_uri`, `$host`, `$scheme`, …:
 * model/location-template.ts) and refuses any other. nginx's `return` runs in the rewrite phase, before
 * ingress-nginx's ssl-redirect, so these routes are not turned into https redirects (ssl-redirect.ts).
 * Where Gatehouse differs, each refused value an InvalidAnnotation and the rest of the Ingress served:
 * - the URL must be an absolute http(s) URL with a host; ingress-nginx only asks for a scheme starting with
 *   "http" and, with its default annotation validation, letters, digits and `-._~/:,?&=` (no `$`, `%`);
 *   Gatehouse takes any URL character (RFC 3986) and the variables above;
 * - codes: ingress-nginx takes 300–308 (temporal: 300–307) and answers 300, 304, 305 and 306 with the URL
 *   as the body and no Location (nginx's `return <code> <text>`); Gatehouse takes only the redirect codes,
 *   301, 302, 303, 307 and 308 (temporal: not 308), and uses the default for any other, as ingress-nginx
 *   does for a code outside its range.
 */
import type { RedirectAction } from "../../../model/index.ts";
import { redirectLocationProblem } from "../../common/redirect-location.ts";
import {
  type AnnotationFamily,
  type AnnotationReader,
  boolAnnotation,
  type RouteEdit,
} from "./route-edits.ts";

/**
 * An absolute http(s) redirect URL as written (variables kept for the proxy to fill), or undefined
 * (absent, empty, or refused).
 */
export function redirectURL(r: AnnotationReader, name: string): string | undefined {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  const v = raw.trim();
  const problem = redirectLocationProblem(v);
  return problem ? r.bad(name, raw, problem) : v;
}

/** A status code among `allowed`, else the default (refused values reported). */
function statusCode(r: AnnotationReader, name: string, allowed: readonly number[], fallback: number): number {
  const raw = r.raw(name);
  if (raw === undefined) return fallback;
  const v = raw.trim();
  if (/^[0-9]{3}$/.test(v) && allowed.includes(Number(v))) return Number(v);
  r.bad(name, raw, `must be one of ${allowed.join(", ")} (the redirect answers the default, ${fallback})`);
  return fallback;
}

const PERMANENT_CODES = [301, 302, 303, 307, 308] as const;
const TEMPORAL_CODES = [301, 302, 303, 307] as const;

function redirectAction(r: AnnotationReader): RedirectAction | undefined {
  // ingress-nginx reads temporal-redirect first and returns with it: permanent-redirect is then not read.
  if ((r.raw("temporal-redirect") ?? "").trim() !== "") {
    const location = redirectURL(r, "temporal-redirect");
    if (location === undefined) return undefined;
    const code = statusCode(r, "temporal-redirect-code", TEMPORAL_CODES, 302);
    return { kind: "Redirect", location, statusCode: code };
  }
  const location = redirectURL(r, "permanent-redirect");
  if (location === undefined) return undefined;
  const code = statusCode(r, "permanent-redirect-code", PERMANENT_CODES, 301);
  return { kind: "Redirect", location, statusCode: code };
}

export const redirectFamily: AnnotationFamily = {
  names: [
    "permanent-redirect",
    "permanent-redirect-code",
    "temporal-redirect",
    "temporal-redirect-code",
    "relative-redirects",
  ],
  read(r): RouteEdit | undefined {
    // Read for its value's sake only (see above).
    boolAnnotation(r, "relative-redirects");
    const action = redirectAction(r);
    return action === undefined ? undefined : { action };
  },
};
