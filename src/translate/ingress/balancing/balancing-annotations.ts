/**
 * ingress-nginx's balancing annotations as the routes' `balancing` (model/balancing.ts):
 * - `load-balance`: `round_robin` (the default) or `ewma`; any other value is refused (InvalidAnnotation)
 *   and the Ingress is balanced round robin;
 * - `upstream-hash-by`: consistent hashing on a key of nginx variables (hash-by.ts); it wins over
 *   `load-balance`, as in ingress-nginx; with `upstream-hash-by-subset: "true"` the key picks a subset of
 *   `upstream-hash-by-subset-size` (default 3) endpoints and the request one of them at random;
 * - `affinity: cookie` with the `session-cookie-*` annotations and `affinity-mode`: a session cookie
 *   (default name INGRESSCOOKIE, path the Ingress path) whose value names the endpoint
 *   (proxy/balancing/session-token.ts). Clients without a valid cookie are balanced as above (in
 *   ingress-nginx, at random); `affinity-mode: balanced` pins as `persistent` does here. A
 *   `session-cookie-*` annotation without `affinity: cookie` does nothing in ingress-nginx either: said.
 */
import type { Balancing, Route, SessionCookie, SessionPersistence } from "../../../model/index.ts";
import {
  type AnnotationFamily,
  type AnnotationReader,
  boolAnnotation,
  type RouteEdit,
} from "../annotations/route-edits.ts";
import { parseHashBy } from "./hash-by.ts";

const COOKIE_ANNOTATIONS = [
  "session-cookie-name",
  "session-cookie-path",
  "session-cookie-domain",
  "session-cookie-expires",
  "session-cookie-max-age",
  "session-cookie-samesite",
  "session-cookie-conditional-samesite-none",
  "session-cookie-secure",
  "session-cookie-change-on-failure",
  "affinity-mode",
] as const;

export const BALANCING_ANNOTATIONS = [
  "load-balance",
  "upstream-hash-by",
  "affinity",
  ...COOKIE_ANNOTATIONS,
] as const;

/** ingress-nginx's default cookie name (internal/ingress/annotations/sessionaffinity). */
export const DEFAULT_COOKIE_NAME = "INGRESSCOOKIE";
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** A cookie attribute value: printable ASCII without `;` (it would end the attribute) or space. */
const ATTRIBUTE = /^[!-:<-~]{1,256}$/;
const DOMAIN = /^\.?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

function algorithm(r: AnnotationReader): Pick<Balancing, "algorithm" | "hashKey"> | undefined {
  const hashBy = r.raw("upstream-hash-by");
  if (hashBy !== undefined && hashBy.trim() !== "") {
    const key = parseHashBy(hashBy.trim());
    const size = subsetSize(r, key.ok);
    if (key.ok)
      return { algorithm: "ConsistentHash", hashKey: key.parts, ...(size ? { hashSubsetSize: size } : {}) };
    r.bad("upstream-hash-by", hashBy, `${key.why}; requests are balanced by load-balance instead`);
  } else subsetSize(r, false);
  const lb = r.raw("load-balance");
  if (lb === undefined) return undefined;
  const v = lb.trim().toLowerCase();
  if (v === "ewma") return { algorithm: "EWMA" };
  if (v !== "round_robin") r.bad("load-balance", lb, 'must be "round_robin" or "ewma"; balanced round robin');
  return undefined;
}

/** ingress-nginx's default `upstream-hash-by-subset-size`. */
const DEFAULT_SUBSET_SIZE = 3;

/** `upstream-hash-by-subset: "true"`: the subset size; said when it or its size cannot take effect. */
function subsetSize(r: AnnotationReader, hashing: boolean): number | undefined {
  const on = boolAnnotation(r, "upstream-hash-by-subset");
  const raw = r.raw("upstream-hash-by-subset-size");
  if (on !== true) {
    if (raw !== undefined)
      r.bad("upstream-hash-by-subset-size", raw, 'does nothing without upstream-hash-by-subset: "true"');
    return undefined;
  }
  if (!hashing) {
    r.bad("upstream-hash-by-subset", "true", "does nothing without a usable upstream-hash-by");
    return undefined;
  }
  if (raw === undefined) return DEFAULT_SUBSET_SIZE;
  if (/^[0-9]{1,4}$/.test(raw.trim()) && Number(raw.trim()) > 0) return Number(raw.trim());
  r.bad(
    "upstream-hash-by-subset-size",
    raw,
    `must be a whole number from 1 to 9999; ${DEFAULT_SUBSET_SIZE} used`,
  );
  return DEFAULT_SUBSET_SIZE;
}

function seconds(r: AnnotationReader, name: string): number | undefined {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^[0-9]{1,9}$/.test(raw.trim())) return r.bad(name, raw, "must be a whole number of seconds");
  return Number(raw.trim());
}

function text(r: AnnotationReader, name: string, pattern: RegExp, what: string): string | undefined {
  const raw = r.raw(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  return pattern.test(raw.trim()) ? raw.trim() : r.bad(name, raw, `must be ${what}`);
}

function cookieSession(
  r: AnnotationReader,
): { session: SessionPersistence; path: string | undefined } | undefined {
  const affinity = r.raw("affinity");
  if (affinity === undefined || affinity.trim() === "") {
    for (const name of COOKIE_ANNOTATIONS) {
      const v = r.raw(name);
      if (v !== undefined) r.bad(name, v, 'does nothing without affinity: "cookie"');
    }
    return undefined;
  }
  if (affinity.trim() !== "cookie")
    return r.bad("affinity", affinity, 'must be "cookie" (the only affinity); no session affinity');
  const name = text(r, "session-cookie-name", TOKEN, "a cookie name token") ?? DEFAULT_COOKIE_NAME;
  const path = text(r, "session-cookie-path", ATTRIBUTE, "a path without spaces or ;");
  const domain = text(r, "session-cookie-domain", DOMAIN, "a domain name");
  const expiresSeconds = seconds(r, "session-cookie-expires");
  const maxAgeSeconds = seconds(r, "session-cookie-max-age");
  const rawSameSite = r.raw("session-cookie-samesite");
  const sameSite = ["None", "Lax", "Strict"].find(
    (s) => s.toLowerCase() === rawSameSite?.trim().toLowerCase(),
  );
  if (rawSameSite !== undefined && rawSameSite.trim() !== "" && sameSite === undefined)
    r.bad("session-cookie-samesite", rawSameSite, 'must be "None", "Lax" or "Strict"');
  const conditional = boolAnnotation(r, "session-cookie-conditional-samesite-none");
  const secure = boolAnnotation(r, "session-cookie-secure");
  const changeOnFailure = boolAnnotation(r, "session-cookie-change-on-failure");
  // Both modes pin the same way here (model/balancing.ts): the value is only checked.
  const rawMode = r.raw("affinity-mode");
  if (rawMode !== undefined && !["balanced", "persistent", ""].includes(rawMode.trim()))
    r.bad("affinity-mode", rawMode, 'must be "balanced" or "persistent"; balanced');
  const cookie: SessionCookie = {
    ...(domain !== undefined ? { domain } : {}),
    ...(expiresSeconds !== undefined ? { expiresSeconds } : {}),
    ...(maxAgeSeconds !== undefined ? { maxAgeSeconds } : {}),
    ...(sameSite !== undefined ? { sameSite: sameSite as SessionCookie["sameSite"] } : {}),
    ...(conditional === true ? { conditionalSameSiteNone: true } : {}),
    ...(secure !== undefined ? { secure } : {}),
  };
  const session: SessionPersistence = {
    type: "Cookie",
    name,
    ...(Object.keys(cookie).length > 0 ? { cookie } : {}),
    ...(changeOnFailure === true ? { changeOnFailure: true } : {}),
  };
  return { session, path };
}

/** The cookie path ingress-nginx uses by default: the location's (the Ingress path; `/` for a regex). */
function locationPath(route: Route): string {
  const p = route.match.path;
  return p.type === "RegularExpression" || !ATTRIBUTE.test(p.value) ? "/" : p.value;
}

function withBalancing(route: Route, b: Balancing): Route {
  if (route.action.kind !== "Forward") return route;
  return { ...route, action: { ...route.action, balancing: b } };
}

export const balancingFamily: AnnotationFamily = {
  names: BALANCING_ANNOTATIONS,
  read(r): RouteEdit | undefined {
    const algo = algorithm(r);
    const sticky = cookieSession(r);
    if (algo === undefined && sticky === undefined) return undefined;
    const base: Balancing = algo ?? { algorithm: "RoundRobin" };
    if (sticky === undefined) return { perRoute: (route) => withBalancing(route, base) };
    const { session, path } = sticky;
    return {
      perRoute: (route) => {
        // `/` is the proxy's default: left out, so the model says what a Gateway API session says.
        const where = path ?? locationPath(route);
        const own = where === "/" ? session : { ...session, cookie: { ...session.cookie, path: where } };
        return withBalancing(route, { ...base, session: own });
      },
    };
  },
};
