/**
 * OpenID Connect browser login: authorization code + PKCE (S256) + state + nonce; the session lives in an
 * encrypted cookie named after issuer, client and cookie domain (so every route sharing those shares the
 * login); refresh with the refresh token when the session's tokens expire; a logout path that clears the
 * cookie and uses RP-initiated logout when the provider offers an `end_session_endpoint`. Requests that
 * want JSON (or are not GET/HEAD) get 401 instead of a redirect.
 */
import type { OIDCAuth, RouteAuth } from "../model/index.ts";
import { logger } from "../observability/logger.ts";
import { type Identity, identityFromClaims } from "./identity.ts";
import type { KeySetFetcher, ProviderMetadata } from "./jwks.ts";
import { codeChallenge, randomToken, type TokenClient, tokenRequest, verifyIdToken } from "./oidc-tokens.ts";
import type { RequestURL } from "./outcome.ts";
import { type AuthFailureReason, unauthorized } from "./responses.ts";
import {
  type CookieOptions,
  clearCookie,
  type LoginTransaction,
  type Session,
  seal,
  setCookie,
  unseal,
} from "./session.ts";
import { type CachedToken, tokenHash, type VerifiedTokenCache } from "./token-cache.ts";
import { cookieValue, type HeaderReader } from "./token-source.ts";

const log = logger.child({ component: "auth-oidc" });

/** Absolute session lifetime; refreshes happen within it. */
const sessionTTLSeconds = 24 * 3600;
const loginTTLSeconds = 600;
/** Above this the raw ID token is left out of the cookie (browsers cap a cookie near 4 KB). */
const maxCookieBytes = 3800;

export interface OIDCContext {
  readonly fetcher: KeySetFetcher;
  readonly client: TokenClient;
  /** Session cookie hash → identity, so a repeated cookie is not decrypted again. */
  readonly sessions: VerifiedTokenCache;
}

export type OIDCResult =
  | { readonly ok: true; readonly identity: Identity; readonly setCookie?: string }
  | { readonly ok: false; readonly response: Response; readonly reason: AuthFailureReason | "redirect" };

/** A cached identity for the request's session cookie, without any await (the hot path). */
export function cachedSession(
  oidc: OIDCAuth,
  headers: HeaderReader,
  ctx: OIDCContext,
): CachedToken | undefined {
  const value = cookieValue(headers.get("cookie"), oidc.cookieName);
  return value === undefined ? undefined : ctx.sessions.get(tokenHash(value), Date.now(), 0);
}

export function isOIDCPath(oidc: OIDCAuth, url: RequestURL): boolean {
  return url.path === oidc.logoutPath || (url.path === callbackPath(oidc) && sameHost(oidc, url));
}

export async function handleOIDC(
  auth: RouteAuth,
  oidc: OIDCAuth,
  req: Request,
  url: RequestURL,
  ctx: OIDCContext,
): Promise<OIDCResult> {
  const realm = `${auth.policy.namespace}/${auth.policy.name}`;
  const cookies: CookieOptions = { secure: oidc.redirectURL.startsWith("https:"), domain: oidc.cookieDomain };
  if (ctx.fetcher.metadata === undefined) await ctx.fetcher.refresh();
  const meta = ctx.fetcher.metadata;
  if (meta === undefined) return refuse(unauthorized(realm), "keys_unavailable");
  if (url.path === oidc.logoutPath) return logout(oidc, meta, req, url, cookies);
  if (url.path === callbackPath(oidc) && sameHost(oidc, url))
    return callback(oidc, meta, req, url, ctx, cookies, realm);
  const raw = cookieValue(req.headers.get("cookie"), oidc.cookieName);
  const session = await unseal<Session>(raw, keyOf(oidc));
  if (session && raw !== undefined) {
    if (session.ae > Date.now()) {
      const identity = identityFromClaims(session.c, "oidc");
      ctx.sessions.set(tokenHash(raw), identity, session.ae);
      return { ok: true, identity };
    }
    if (session.rt) {
      const refreshed = await refresh(oidc, meta, session, ctx);
      if (refreshed)
        return {
          ok: true,
          identity: refreshed.identity,
          setCookie: setCookie(oidc.cookieName, refreshed.cookie, sessionTTLSeconds, cookies),
        };
    }
  }
  if (wantsJSON(req)) return refuse(unauthorized(realm), "login_required");
  return login(oidc, meta, url, cookies);
}

function callbackPath(oidc: OIDCAuth): string {
  return new URL(oidc.redirectURL).pathname;
}

function sameHost(oidc: OIDCAuth, url: RequestURL): boolean {
  return new URL(oidc.redirectURL).hostname === new URL(`http://${url.host}`).hostname;
}

function refuse(response: Response, reason: AuthFailureReason): OIDCResult {
  return { ok: false, response, reason };
}

function redirect(location: string, cookies: string[]): OIDCResult {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return { ok: false, response: new Response(null, { status: 302, headers }), reason: "redirect" };
}

/** JSON clients, scripts and non-GET requests cannot follow a login redirect usefully. */
function wantsJSON(req: Request): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return true;
  const accept = req.headers.get("accept") ?? "";
  return (
    (accept.includes("application/json") && !accept.includes("text/html")) ||
    req.headers.has("x-requested-with")
  );
}

async function login(
  oidc: OIDCAuth,
  meta: ProviderMetadata,
  url: RequestURL,
  cookies: CookieOptions,
): Promise<OIDCResult> {
  if (!meta.authorization_endpoint) return refuse(unauthorized(oidc.issuer), "oidc_error");
  const tx: LoginTransaction = {
    s: randomToken(),
    n: randomToken(),
    v: randomToken(),
    u: url.path + (url.query ? `?${url.query}` : ""),
  };
  const params = new URLSearchParams({
    response_type: "code",
    client_id: oidc.clientId,
    redirect_uri: oidc.redirectURL,
    scope: oidc.scopes.join(" "),
    state: tx.s,
    nonce: tx.n,
    code_challenge: codeChallenge(tx.v),
    code_challenge_method: "S256",
  });
  const sealed = await seal(tx, keyOf(oidc), loginTTLSeconds);
  return redirect(`${meta.authorization_endpoint}?${params}`, [
    setCookie(`${oidc.cookieName}-login`, sealed, loginTTLSeconds, cookies),
  ]);
}

async function callback(
  oidc: OIDCAuth,
  meta: ProviderMetadata,
  req: Request,
  url: RequestURL,
  ctx: OIDCContext,
  cookies: CookieOptions,
  realm: string,
): Promise<OIDCResult> {
  const q = new URLSearchParams(url.query);
  const tx = await unseal<LoginTransaction>(
    cookieValue(req.headers.get("cookie"), `${oidc.cookieName}-login`),
    keyOf(oidc),
  );
  const code = q.get("code");
  if (!tx || !code || q.get("state") !== tx.s) {
    log.info("login callback refused", {
      issuer: oidc.issuer,
      why: !tx
        ? "no login in progress"
        : !code
          ? `provider error ${q.get("error") ?? "?"}`
          : "state mismatch",
    });
    return refuse(unauthorized(realm, "invalid_request", "login failed"), "oidc_error");
  }
  try {
    const tokens = await tokenRequest(
      oidc,
      meta,
      { grant_type: "authorization_code", code, redirect_uri: oidc.redirectURL, code_verifier: tx.v },
      ctx.client,
    );
    if (!tokens.id_token) throw new Error("no id_token in the token response");
    const claims = await verifyIdToken(tokens.id_token, oidc, ctx.fetcher.getKey, tx.n);
    const sealed = await sealSession(oidc, claims, tokens, tokens.id_token);
    const back = tx.u.startsWith("/") && !tx.u.startsWith("//") ? tx.u : "/";
    return redirect(back, [
      setCookie(oidc.cookieName, sealed, sessionTTLSeconds, cookies),
      clearCookie(`${oidc.cookieName}-login`, cookies),
    ]);
  } catch (err) {
    log.warn("login failed", {
      issuer: oidc.issuer,
      error: err instanceof Error ? err.message : String(err),
    });
    return refuse(unauthorized(realm, "invalid_request", "login failed"), "oidc_error");
  }
}

async function refresh(
  oidc: OIDCAuth,
  meta: ProviderMetadata,
  session: Session,
  ctx: OIDCContext,
): Promise<{ identity: Identity; cookie: string } | undefined> {
  try {
    const tokens = await tokenRequest(
      oidc,
      meta,
      { grant_type: "refresh_token", refresh_token: session.rt as string },
      ctx.client,
    );
    const claims = tokens.id_token
      ? await verifyIdToken(tokens.id_token, oidc, ctx.fetcher.getKey, undefined)
      : session.c;
    if (claims.sub !== session.c.sub) throw new Error("refreshed ID token names another subject");
    const cookie = await sealSession(
      oidc,
      claims,
      { ...tokens, refresh_token: tokens.refresh_token ?? session.rt },
      tokens.id_token ?? session.it,
    );
    return { identity: identityFromClaims(claims, "oidc"), cookie };
  } catch (err) {
    log.info("session refresh failed; login again", {
      issuer: oidc.issuer,
      error: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}

async function sealSession(
  oidc: OIDCAuth,
  claims: Record<string, unknown>,
  tokens: { expires_in?: number; refresh_token?: string },
  idToken: string | undefined,
): Promise<string> {
  const idExp = typeof claims.exp === "number" ? claims.exp * 1000 : Date.now();
  const ae =
    typeof tokens.expires_in === "number" ? Math.min(idExp, Date.now() + tokens.expires_in * 1000) : idExp;
  const base: Session = { c: claims, ae, ...(tokens.refresh_token ? { rt: tokens.refresh_token } : {}) };
  const key = keyOf(oidc);
  if (idToken) {
    const withHint = await seal({ ...base, it: idToken }, key, sessionTTLSeconds);
    if (withHint.length <= maxCookieBytes) return withHint;
  }
  return seal(base, key, sessionTTLSeconds);
}

async function logout(
  oidc: OIDCAuth,
  meta: ProviderMetadata,
  req: Request,
  url: RequestURL,
  cookies: CookieOptions,
): Promise<OIDCResult> {
  const session = await unseal<Session>(cookieValue(req.headers.get("cookie"), oidc.cookieName), keyOf(oidc));
  const after = oidc.postLogoutRedirectURL ?? `${url.scheme}://${url.host}/`;
  let location = after;
  if (meta.end_session_endpoint) {
    const params = new URLSearchParams({ client_id: oidc.clientId, post_logout_redirect_uri: after });
    if (session?.it) params.set("id_token_hint", session.it);
    location = `${meta.end_session_endpoint}?${params}`;
  }
  return redirect(location, [clearCookie(oidc.cookieName, cookies)]);
}

const keys = new WeakMap<OIDCAuth, Uint8Array>();

/** The session key as bytes, decoded once per model object. */
export function keyOf(oidc: OIDCAuth): Uint8Array {
  let key = keys.get(oidc);
  if (!key) {
    key = new Uint8Array(Buffer.from(oidc.sessionKey, "base64"));
    keys.set(oidc, key);
  }
  return key;
}
