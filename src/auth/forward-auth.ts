/**
 * Forward authentication (model `ExternalAuth`; ingress-nginx `auth-url`, AuthPolicy `spec.externalAuth`):
 * one request without body to the service per client request (or a kept answer), as ingress-nginx's
 * `auth_request` location sends it: the client's headers (hop-by-hop, framing, Host and the client's own
 * forwarding headers left out), `X-Original-URL`, `X-Original-Method`, `X-Real-IP`, `X-Forwarded-For` (the
 * client address, never a chain the client wrote), `X-Auth-Request-Redirect`, `X-Sent-From`; with a fixed
 * method also `X-Original-URI` and `X-Scheme`; and, as Traefik's forwardAuth sends them,
 * `X-Forwarded-Proto`, `-Host`, `-Uri` and `-Method`. The answer decides:
 * - 2xx: admitted; `responseHeaders` are copied onto the upstream request (a client's own copies removed
 *   first, whether the service sent one or not), the service's Set-Cookie goes to the client;
 * - 401: 401 with the service's WWW-Authenticate, or a 302 to the sign-in URL with `rd` (ingress-nginx's
 *   `$pass_access_scheme://$http_host$escaped_request_uri`) and the service's Set-Cookie;
 * - 403: 403;
 * - anything else (a redirect, 5xx, 404), no answer within the timeout, a refused connection: 503. Never
 *   the backend: fail closed.
 * The answer's body is never read. Fetch keeps connections to the service alive (its own pool).
 */
import { HOP_BY_HOP } from "../model/http-syntax.ts";
import type { ExternalAuth } from "../model/index.ts";
import {
  AUTH_CACHE_FAMILIES,
  AUTH_CACHE_VARIABLES,
  fillLocation,
  type LocationPart,
  type LocationVariable,
  parseLocationTemplate,
} from "../model/location-template.ts";
import { limitedLog } from "../observability/log-limit.ts";
import { logger } from "../observability/logger.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import { type Identity, identityFromClaims } from "./identity.ts";
import { cookieValue } from "./token-source.ts";

const log = logger.child({ component: "auth" });

/** The identity of a request only forward authentication checks: no subject, no claims. */
export const EXTERNAL_IDENTITY: Identity = identityFromClaims({}, "external");

/** What the request path knows of the client's request. */
export interface ForwardAuthInput {
  /** The route's name: answers are kept per route, as nginx keeps them per location. */
  readonly route: string;
  readonly method: string;
  readonly scheme: "http" | "https";
  /** The host routing used, normalised (no port). */
  readonly host: string;
  /** The listener's port ($http_host names it unless it is the scheme's default). */
  readonly port: number;
  /** Path as routing saw it, and the query with its `?` ("" for none). */
  readonly path: string;
  readonly query: string;
  readonly clientIp: string;
  readonly headers: Headers;
}

export type ForwardAuthOutcome =
  | {
      readonly ok: true;
      /** Removed from the upstream request first (every `responseHeaders` name)… */
      readonly removeHeaders: readonly string[];
      /** …then set from the service's answer. */
      readonly setHeaders: readonly (readonly [string, string])[];
      /** Appended to the client's response (the service's Set-Cookie). */
      readonly responseHeaders: readonly (readonly [string, string])[];
    }
  | { readonly ok: false; readonly response: Response };

/** Client headers never sent to the service: they describe the client's connection, not the request. */
const notForwarded = new Set([
  ...HOP_BY_HOP,
  "content-length",
  "expect",
  "host",
  // Set below from what the gateway knows, never passed on from the client: services trust them.
  "forwarded",
  "x-forwarded-proto",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-port",
  "x-forwarded-uri",
  "x-forwarded-method",
  "x-forwarded-scheme",
  "x-forwarded-prefix",
  "x-forwarded-server",
  "x-original-uri",
  "x-scheme",
  "x-real-ip",
]);

/** An answer kept for a key (only what deciding needs). */
interface Kept {
  readonly status: number;
  readonly set: readonly (readonly [string, string])[];
  readonly cookies: readonly string[];
  readonly challenge: string | null;
  readonly untilMs: number;
}

/** Sub-requests in flight per policy at most; more are answered 503 at once (no queue in front of it). */
const MAX_IN_FLIGHT = 512;
/** The longest service header value copied onto a request (nginx's default large header buffer). */
const MAX_COPIED_VALUE = 8192;
const MAX_KEPT = 10_000;

export class ForwardAuth {
  /** Sub-requests in flight per policy: one slow service cannot starve the others' routes. */
  private readonly inFlight = new WeakMap<ExternalAuth, number>();
  /** Kept answers per policy (as nginx keeps them per location): one route's answer never serves another. */
  private readonly kept = new WeakMap<ExternalAuth, Map<string, Kept>>();
  private readonly templates = new WeakMap<ExternalAuth, Compiled>();

  constructor(
    private readonly opts: { readonly fetch?: typeof fetch; readonly metrics?: GatewayMetrics } = {},
  ) {}

  async check(ext: ExternalAuth, input: ForwardAuthInput, realm: string): Promise<ForwardAuthOutcome> {
    const c = this.compiled(ext);
    const vars = (v: LocationVariable) => variable(v, input);
    const cacheKey = c.cacheKey && keptKey(c.cacheKey, vars, input);
    const now = Date.now();
    const hit = cacheKey === undefined ? undefined : this.kept.get(ext)?.get(cacheKey);
    if (hit !== undefined && hit.untilMs > now) return this.decide(ext, c, hit, input);
    const running = this.inFlight.get(ext) ?? 0;
    if (running >= MAX_IN_FLIGHT) return this.failed("busy", realm, "too many checks in flight");
    this.inFlight.set(ext, running + 1);
    try {
      const url = fillLocation(c.url, vars);
      const res = await (this.opts.fetch ?? fetch)(url, {
        // nginx's auth_request sub-request is a GET whatever the client sent (X-Original-Method says it).
        method: ext.method ?? "GET",
        headers: serviceHeaders(ext, c, input, vars),
        redirect: "manual",
        signal: AbortSignal.timeout(ext.timeoutMs),
      });
      // The body says nothing we use; a service sending megabytes costs a cancel, not a read.
      res.body?.cancel().catch(() => {});
      const set = ext.responseHeaders.flatMap((n) => {
        const v = res.headers.get(n);
        return v === null ? [] : [[n, v] as const];
      });
      // A header that large is not an identity: refuse rather than carry (and keep) it upstream.
      if (set.some(([, v]) => v.length > MAX_COPIED_VALUE))
        return this.failed("bad_answer", realm, "a copied header is longer than 8 KiB");
      const cookies = res.headers.getSetCookie();
      // Like nginx's proxy_cache: an answer that sets cookies, or says not to, is one client's alone.
      const keepable =
        cookies.length === 0 && !/no-store|private/i.test(res.headers.get("cache-control") ?? "");
      const answer: Kept = {
        status: res.status,
        set,
        cookies,
        challenge: res.headers.get("www-authenticate"),
        untilMs: keepable ? now + (ext.cache?.seconds[String(res.status)] ?? 0) * 1000 : now,
      };
      if (cacheKey !== undefined && answer.untilMs > now) this.keep(ext, cacheKey, answer);
      return this.decide(ext, c, answer, input);
    } catch (err) {
      const timedOut = err instanceof DOMException && err.name === "TimeoutError";
      return this.failed(timedOut ? "timeout" : "unreachable", realm, String(err));
    } finally {
      this.inFlight.set(ext, (this.inFlight.get(ext) ?? 1) - 1);
    }
  }

  private decide(ext: ExternalAuth, c: Compiled, a: Kept, input: ForwardAuthInput): ForwardAuthOutcome {
    const cookies = (always: boolean) =>
      always ? a.cookies.map((v) => ["set-cookie", v] as const) : ([] as const);
    if (a.status >= 200 && a.status < 300)
      return {
        ok: true,
        removeHeaders: ext.responseHeaders,
        setHeaders: a.set,
        responseHeaders: cookies(true),
      };
    if (a.status === 401 || a.status === 403) {
      this.opts.metrics?.authFailures.inc({ reason: "external_denied" });
      const headers = new Headers({
        "content-type": "text/plain; charset=utf-8",
        "cache-control": "no-store",
      });
      for (const [, v] of cookies(ext.alwaysSetCookie || (a.status === 401 && c.signin !== undefined)))
        headers.append("set-cookie", v);
      if (a.status === 401 && c.signin !== undefined) {
        headers.set("location", signinLocation(c.signin, ext.signinRedirectParam, input));
        return { ok: false, response: new Response(null, { status: 302, headers }) };
      }
      if (a.status === 401 && a.challenge !== null) headers.set("www-authenticate", a.challenge);
      const text = a.status === 401 ? "401 Unauthorized\n" : "403 Forbidden\n";
      return { ok: false, response: new Response(text, { status: a.status, headers }) };
    }
    return this.failed("bad_answer", "", `the service answered ${a.status}`);
  }

  private failed(kind: string, realm: string, detail: string): ForwardAuthOutcome {
    this.opts.metrics?.authFailures.inc({ reason: "external_error" });
    limitedLog("warn", `forward-auth:${kind}:${realm}`, "forward authentication failed closed (503)", {
      reason: kind,
      detail,
      ...(realm !== "" ? { policy: realm } : {}),
    });
    const response = new Response("503 Service Unavailable\n", {
      status: 503,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    });
    return { ok: false, response };
  }

  private keep(ext: ExternalAuth, key: string, answer: Kept): void {
    let kept = this.kept.get(ext);
    if (kept === undefined) {
      kept = new Map();
      this.kept.set(ext, kept);
    }
    if (kept.size >= MAX_KEPT) {
      const oldest = kept.keys().next().value;
      if (oldest !== undefined) kept.delete(oldest);
    }
    kept.delete(key);
    kept.set(key, answer);
  }

  private compiled(ext: ExternalAuth): Compiled {
    let c = this.templates.get(ext);
    if (c === undefined) {
      c = compile(ext);
      this.templates.set(ext, c);
    }
    return c;
  }
}

interface Compiled {
  readonly url: readonly LocationPart[];
  readonly signin: readonly LocationPart[] | undefined;
  readonly redirect: readonly LocationPart[] | undefined;
  readonly cacheKey: readonly LocationPart[] | undefined;
}

/** Translation checked every template; one that does not parse here answers nothing (fails closed). */
function compile(ext: ExternalAuth): Compiled {
  const parts = (text: string) => {
    const p = parseLocationTemplate(text, AUTH_CACHE_VARIABLES, AUTH_CACHE_FAMILIES);
    if (!p.ok) throw new Error(`forward authentication template ${JSON.stringify(text)}: ${p.message}`);
    return p.parts;
  };
  return {
    url: parts(ext.url),
    signin: ext.signinURL === undefined ? undefined : parts(ext.signinURL),
    redirect: ext.requestRedirect === undefined ? undefined : parts(ext.requestRedirect),
    cacheKey: ext.cache === undefined ? undefined : parts(ext.cache.key),
  };
}

/**
 * The kept answer's key: the route (as nginx keys by location), the host and the filled template, hashed
 * (bounded memory, no cookie kept in the clear). Undefined when every variable filled to nothing: one
 * anonymous answer must not serve every anonymous client.
 */
function keptKey(
  parts: readonly LocationPart[],
  vars: (v: LocationVariable) => string,
  input: ForwardAuthInput,
): string | undefined {
  let filled = "";
  let any = false;
  for (const p of parts) {
    if ("text" in p) filled += p.text;
    else {
      const v = vars(p.variable);
      if (v !== "") any = true;
      filled += v;
    }
  }
  if (!any) return undefined;
  return Bun.CryptoHasher.hash("sha256", `${input.route}\n${input.host}\n${filled}`, "base64") as string;
}

function serviceHeaders(
  ext: ExternalAuth,
  c: Compiled,
  input: ForwardAuthInput,
  vars: (v: LocationVariable) => string,
): Headers {
  const out = new Headers();
  for (const [name, value] of input.headers)
    if (!notForwarded.has(name) && !name.startsWith("x-gatehouse-relayed-")) out.append(name, value);
  const requestURI = input.path + input.query;
  out.set("x-original-url", `${input.scheme}://${httpHost(input)}${requestURI}`);
  out.set("x-original-method", input.method);
  out.set("x-sent-from", "nginx-ingress-controller");
  out.set("x-real-ip", input.clientIp);
  out.set("x-forwarded-for", input.clientIp);
  out.set("x-auth-request-redirect", c.redirect ? fillLocation(c.redirect, vars) : requestURI);
  // Traefik's forwardAuth set, which Authelia's and oauth2-proxy's forward-auth endpoints read too.
  out.set("x-forwarded-proto", input.scheme);
  out.set("x-forwarded-host", httpHost(input));
  out.set("x-forwarded-uri", requestURI);
  out.set("x-forwarded-method", input.method);
  if (ext.method !== undefined) {
    out.set("x-original-uri", requestURI);
    out.set("x-scheme", input.scheme);
  }
  return out;
}

/** The sign-in URL with `<param>=<scheme>://<host><escaped request URI>` unless it already names one. */
function signinLocation(parts: readonly LocationPart[], param: string, input: ForwardAuthInput): string {
  const base = fillLocation(parts, (v) => variable(v, input));
  const q = base.indexOf("?");
  if (q >= 0 && new URLSearchParams(base.slice(q + 1)).get(param)) return base;
  const back = `${input.scheme}://${httpHost(input)}${escapeURI(input.path + input.query)}`;
  return `${base}${q < 0 ? "?" : "&"}${param}=${back}`;
}

function httpHost(i: ForwardAuthInput): string {
  const standard = i.scheme === "https" ? 443 : 80;
  return i.port === standard || i.port === 0 ? i.host : `${i.host}:${i.port}`;
}

/**
 * nginx's `set_escape_uri` (set-misc): every byte but `A-Z a-z 0-9 - . _ ~ ! $ ' ( ) * , @ \` |`
 * percent-encoded in upper-case hex (encodeURIComponent also encodes `$ , @ \` |`).
 */
export function escapeURI(text: string): string {
  return encodeURIComponent(text).replace(/%(24|2C|40|60|7C)/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

function variable(v: LocationVariable, i: ForwardAuthInput): string {
  switch (v) {
    case "scheme":
      return i.scheme;
    case "host":
      return i.host;
    case "http_host":
      return httpHost(i);
    case "server_port":
      return String(i.port);
    case "request_uri":
      return i.path + i.query;
    case "escaped_request_uri":
      return escapeURI(i.path + i.query);
    case "uri":
      return i.path;
    case "args":
    case "query_string":
      return i.query.slice(1);
    case "is_args":
      return i.query === "" ? "" : "?";
    case "remote_addr":
      return i.clientIp;
    case "request_method":
      return i.method;
    default:
      if (v.startsWith("http_")) return i.headers.get(v.slice(5).replaceAll("_", "-")) ?? "";
      if (v.startsWith("cookie_")) return cookieValue(i.headers.get("cookie"), v.slice(7)) ?? "";
      log.debug("forward auth: unknown variable", { variable: v });
      return "";
  }
}
