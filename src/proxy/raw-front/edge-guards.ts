/**
 * The edge guards of guards.ts, run by the raw-socket front on a parsed request head: the client address
 * lists (auth/ip-access.ts), then authentication (token routes only; `checkToken` reads the head, no
 * Request is built), then the rate limit keyed with the verified claims. Same order, same outcomes, same
 * fail-closed rules as `guarded()`: a route asking for an engine the process does not have is a 500, and
 * so is a guard that throws. The result stays synchronous while every step is (a cached token, no limit),
 * so the common case costs no promise.
 */

import { addressGrant } from "../../auth/address-grant.ts";
import { CLIENT_CERT_HEADERS, checkClientCertificate } from "../../auth/client-certificate.ts";
import type { AuthOutcome } from "../../auth/enforce.ts";
import { IP_ALLOWED, IP_OUTSIDE, IP_PASSED, IP_REFUSED, ipRefused, ipVerdict } from "../../auth/ip-access.ts";
import { limitedLog } from "../../observability/log-limit.ts";
import type { RateLimitOutcome } from "../../ratelimit/enforce.ts";
import type { RequestContext } from "../filters/filter-types.ts";
import type { EdgeGuards } from "../request/guards.ts";
import type { RequestTarget } from "../request/request-target.ts";
import { errorResponse } from "../request/responses.ts";
import type { CompiledRoute } from "../table.ts";
import type { TlsSession } from "./client-side.ts";
import type { ResponseHeaderEdit } from "./http1/head-to-client.ts";
import { type ClaimEdit, DROP } from "./http1/head-to-upstream.ts";

/** A request header by lower-case name (the dispatcher's view of the parsed head). */
export interface HeadReader {
  get(name: string): string | null;
}

/** What the request needs to be guarded. */
export interface GuardInput {
  readonly route: CompiledRoute;
  readonly target: RequestTarget;
  readonly method: string;
  /** The host routing chose the route by, normalised (an absolute-form target's authority, else Host). */
  readonly host: string;
  readonly headers: HeadReader;
  /** Every field of the head, for forward authentication (built only when a route asks for it). */
  readonly headerList: () => Headers;
  /** The listener's scheme and port (forward authentication's X-Original-URL). */
  readonly scheme: "http" | "https";
  readonly port: number;
  /** The client (`--trusted-proxies` applied) and the connection's peer (client-origin.ts). */
  readonly clientIp: string;
  readonly peer: string;
  /** The connection came with a PROXY header: no X-Forwarded-For is believed (client-origin.ts). */
  readonly forwardedForBarred: boolean;
  /** HTTPS: what the handshake settled (SNI, the client's verified certificate chain). */
  readonly tls: TlsSession | undefined;
  readonly guards: EdgeGuards | undefined;
  readonly serverHeader: string;
}

/** Admitted: the edits the guards ask for, as filters the fast path runs (undefined: none). */
export interface GuardPass {
  readonly ok: true;
  /** Runs before the route's request filters (guards.ts edits the request before any filter runs). */
  readonly request: ((ctx: RequestContext) => undefined) | undefined;
  /** The same claim-header edit as data the byte-built upstream head applies (undefined: use `request`). */
  readonly requestEdit?: ClaimEdit | undefined;
  /** Runs after the route's response filters (guards.ts edits the response the action returned). */
  readonly response: ResponseHeaderEdit | undefined;
  /** The query to send upstream instead of the client's (an API key taken out of it); undefined: as sent. */
  readonly query?: string | undefined;
}

/** Refused: this answer goes to the client and nothing goes upstream. */
export interface GuardRefusal {
  readonly ok: false;
  readonly response: Response;
}

export type GuardResult = GuardPass | GuardRefusal;

type Edit = readonly (readonly [string, string])[];

export function runGuards(input: GuardInput): GuardResult | Promise<GuardResult> {
  try {
    const { route } = input;
    const verdict = route.ipAccess === undefined ? IP_PASSED : ipVerdict(route.ipAccess, input.clientIp);
    if (verdict === IP_REFUSED || (verdict === IP_OUTSIDE && !route.addressGrants))
      return { ok: false, response: ipRefused(input.serverHeader) };
    const byAddress = verdict === IP_ALLOWED && route.addressGrants;
    if (route.clientCertificate === undefined) return authStep(input, byAddress);
    const tls = input.tls;
    const view = tls && {
      servername: tls.servername,
      authorized: tls.authorized,
      chain: tls.peerCertificates(),
    };
    // The host the route was chosen by, not the Host field: they differ for an absolute-form target.
    const checked = checkClientCertificate(route.clientCertificate, view, input.host, input.serverHeader);
    if (!checked.ok) return checked;
    const rest = authStep(input, byAddress);
    return rest instanceof Promise
      ? rest.then((r) => withCertEdit(r, checked.set))
      : withCertEdit(rest, checked.set);
  } catch (err) {
    return thrown(input, err);
  }
}

/** An admitted request also gets the `ssl-client-*` headers, in place of any the client sent. */
function withCertEdit(result: GuardResult, set: Edit): GuardResult {
  if (!result.ok) return result;
  const names = CLIENT_CERT_HEADERS as readonly string[];
  const own = (ctx: RequestContext): undefined => {
    for (const name of names) ctx.headers.delete(name);
    for (const [name, value] of set) ctx.headers.set(name, value);
    return undefined;
  };
  const prior = result.request;
  const request =
    prior === undefined
      ? own
      : (ctx: RequestContext): undefined => {
          own(ctx);
          return prior(ctx);
        };
  const lines = set.map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const edit: ClaimEdit = { remove: names, lines };
  // The byte-built head takes one edit: merged with the claims', or (claims as a filter only) none.
  const requestEdit =
    prior === undefined
      ? edit
      : result.requestEdit === undefined
        ? undefined
        : {
            remove: [...edit.remove, ...result.requestEdit.remove],
            lines: edit.lines + result.requestEdit.lines,
          };
  return { ...result, request, requestEdit };
}

/** `byAddress`: the allow lists let the client in without credentials (satisfy: Any). */
function authStep(input: GuardInput, byAddress: boolean): GuardResult | Promise<GuardResult> {
  try {
    const { route, guards } = input;
    if (route.auth === undefined) return limitStep(input, undefined, undefined);
    if (guards?.auth === undefined)
      return missingEngine(input, "route requires authentication but no enforcer runs");
    const q = input.target.query;
    const query = q.length > 0 ? q.slice(1) : "";
    const outcome = byAddress
      ? addressGrant(route.auth, query)
      : guards.auth.checkToken(route.auth, input.headers, query);
    if (outcome instanceof Promise)
      return outcome.then(
        (o) => afterAuth(input, o),
        (e) => thrown(input, e),
      );
    return afterAuth(input, outcome);
  } catch (err) {
    return thrown(input, err);
  }
}

function afterAuth(input: GuardInput, outcome: AuthOutcome): GuardResult | Promise<GuardResult> {
  try {
    if (!outcome.ok) return { ok: false, response: outcome.response };
    const auth = input.route.auth;
    const forward = input.guards?.auth?.forward;
    if (auth?.external === undefined || outcome.identity.via === "address" || auth.failClosed !== undefined)
      return admitted(input, outcome);
    // The route's other methods admitted: the service decides last, on the client's own headers.
    if (forward === undefined)
      return missingEngine(input, "route requires authentication but no enforcer runs");
    const asked = forward.check(
      auth.external,
      {
        route: input.route.name,
        method: input.method,
        scheme: input.scheme,
        host: input.host,
        port: input.port,
        path: input.target.path,
        query: input.target.query,
        clientIp: input.clientIp,
        headers: input.headerList(),
      },
      `${auth.policy.namespace}/${auth.policy.name}`,
    );
    return asked.then(
      (f) =>
        f.ok
          ? admitted(input, {
              ...outcome,
              removeHeaders: [...outcome.removeHeaders, ...f.removeHeaders],
              setHeaders: [...outcome.setHeaders, ...f.setHeaders],
              responseHeaders: [...(outcome.responseHeaders ?? []), ...f.responseHeaders],
            })
          : { ok: false, response: f.response },
      (e) => thrown(input, e),
    );
  } catch (err) {
    return thrown(input, err);
  }
}

/** Admitted by authentication: its header edits, then the rate limit. */
function admitted(
  input: GuardInput,
  outcome: AuthOutcome & { ok: true },
): GuardResult | Promise<GuardResult> {
  try {
    const claims = claimStepsOf(outcome);
    const next = limitStep(input, outcome, claims.request, claims.edit);
    const query = outcome.query;
    if (query === undefined) return next;
    const withQuery = (r: GuardResult): GuardResult => (r.ok ? { ...r, query } : r);
    return next instanceof Promise ? next.then(withQuery) : withQuery(next);
  } catch (err) {
    return thrown(input, err);
  }
}

function limitStep(
  input: GuardInput,
  auth: (AuthOutcome & { ok: true }) | undefined,
  request: GuardPass["request"],
  requestEdit?: ClaimEdit,
): GuardResult | Promise<GuardResult> {
  const { route, guards } = input;
  const appended = auth?.responseHeaders;
  if (route.rateLimit === undefined)
    return { ok: true, request, requestEdit, response: responseEdit(appended, undefined) };
  if (guards?.rateLimit === undefined)
    return missingEngine(input, "route has a rate limit but no limiter runs");
  const headers = input.headers;
  const checked = guards.rateLimit.check(route.rateLimit, {
    clientIp: input.clientIp,
    peer: input.peer,
    forwardedForBarred: input.forwardedForBarred,
    header: (name) => headers.get(name),
    method: input.method,
    path: input.target.path,
    routeName: route.name,
    ...(auth !== undefined ? { claims: auth.identity.claims } : {}),
  });
  if (checked instanceof Promise)
    return checked.then(
      (o) => afterLimit(input, o, request, requestEdit, appended),
      (e) => thrown(input, e),
    );
  return afterLimit(input, checked, request, requestEdit, appended);
}

function afterLimit(
  input: GuardInput,
  outcome: RateLimitOutcome,
  request: GuardPass["request"],
  requestEdit: ClaimEdit | undefined,
  appended: Edit | undefined,
): GuardResult {
  if (!outcome.allowed) {
    outcome.response.headers.set("server", input.serverHeader);
    return { ok: false, response: outcome.response };
  }
  return { ok: true, request, requestEdit, response: responseEdit(appended, outcome.headers) };
}

/** An admitted outcome's claim headers: as a request filter, and as data when bytes can carry them. */
interface ClaimSteps {
  readonly request: GuardPass["request"];
  readonly edit: ClaimEdit | undefined;
}

/** No claim headers configured: no request edit, so the upstream head stays the plain, unparsed copy. */
const NO_CLAIMS: ClaimSteps = { request: undefined, edit: undefined };

/** Made once per authorization decision (cached with its token): a request pays a WeakMap lookup. */
const claimSteps = new WeakMap<object, ClaimSteps>();

function claimStepsOf(outcome: AuthOutcome & { ok: true }): ClaimSteps {
  const remove = outcome.removeHeaders;
  const set = outcome.setHeaders;
  if (remove.length === 0 && set.length === 0) return NO_CLAIMS;
  let steps = claimSteps.get(outcome);
  if (steps === undefined) {
    const request = (ctx: RequestContext): undefined => {
      for (const name of remove) ctx.headers.delete(name);
      for (const [name, value] of set) ctx.headers.set(name, value);
      return undefined;
    };
    steps = { request, edit: claimEdit(remove, set) };
    claimSteps.set(outcome, steps);
  }
  return steps;
}

export function claimEditOf(outcome: AuthOutcome & { ok: true }): ClaimEdit | undefined {
  return claimStepsOf(outcome).edit;
}

function claimEdit(remove: readonly string[], set: Edit): ClaimEdit | undefined {
  const names = new Set<string>();
  for (const n of remove) names.add(n.toLowerCase());
  const seen = new Set<string>();
  let lines = "";
  for (const [name, value] of set) {
    const lower = name.toLowerCase();
    if (seen.has(lower)) return undefined;
    seen.add(lower);
    names.add(lower);
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if ((c < 0x20 && c !== 9) || c > 0x7e) return undefined;
    }
    lines += `${name}: ${value}\r\n`;
  }
  for (const n of names) if (n === "host" || DROP.has(n)) return undefined;
  return { remove: [...names], lines };
}

/** Auth's response headers appended, then the limit's set: the gateway's limit replaces the backend's. */
function responseEdit(
  appended: Edit | undefined,
  replaced: Edit | undefined,
): ResponseHeaderEdit | undefined {
  const append = appended ?? [];
  const set = replaced ?? [];
  if (append.length === 0 && set.length === 0) return undefined;
  return { append, set };
}

function missingEngine(input: GuardInput, message: string): GuardRefusal {
  limitedLog("error", input.route.name, message, { route: input.route.name });
  return { ok: false, response: errorResponse(500, input.serverHeader) };
}

/** Both engines promise never to throw; if one does anyway, the request is refused, never forwarded. */
function thrown(input: GuardInput, err: unknown): GuardRefusal {
  limitedLog("error", input.route.name, "edge guard failed", { route: input.route.name, error: String(err) });
  return { ok: false, response: errorResponse(500, input.serverHeader) };
}
