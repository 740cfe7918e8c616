/**
 * The narrow API the request path calls: `check(route.auth, req, url)` before any filter runs. It owns
 * the key fetchers (one per issuer and key location, started and stopped by `update(model)`) and the
 * verified-token caches (one per provider configuration, kept across model updates that do not change
 * it). A cached token is answered synchronously with the same frozen objects every time: one SHA-256 and
 * two map lookups, no allocation. Anything that cannot be checked is refused (fail closed).
 */
import type { GatewayModel, JWTAuth, JWTProvider, OIDCAuth, RouteAuth } from "../model/index.ts";
import { logger } from "../observability/logger.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import { authorize, claimHeaders } from "./authorize.ts";
import {
  CredentialChecks,
  type CredentialResult,
  credentialHeaders,
  credentialRefusal,
  withoutParam,
} from "./credentials/credential-check.ts";
import { EXTERNAL_IDENTITY, ForwardAuth } from "./forward-auth.ts";
import type { Identity } from "./identity.ts";
import {
  fetcherKey,
  fetcherKeys,
  type KeyLookup,
  KeySetFetcher,
  type KeySetOptions,
  staticKeys,
} from "./jwks.ts";
import { maxTokenLength, pickProvider, verifyJWT } from "./jwt.ts";
import { cachedSession, handleOIDC, isOIDCPath, type OIDCContext } from "./oidc.ts";
import type { AuthOutcome, RequestURL } from "./outcome.ts";
import { type AuthFailureReason, forbidden, unauthorized } from "./responses.ts";
import { type CachedToken, tokenHash, VerifiedTokenCache } from "./token-cache.ts";
import { extractToken, type HeaderReader } from "./token-source.ts";

export type { AuthOutcome, RequestURL } from "./outcome.ts";

const log = logger.child({ component: "auth" });

export interface AuthEnforcerOptions {
  readonly metrics?: GatewayMetrics;
  /** Used for JWKS, discovery and token endpoint requests (tests pass their own). */
  readonly fetch?: typeof fetch;
  /** Key fetcher timings (timeout, refresh, retry, unknown-kid cooldown). */
  readonly keys?: KeySetOptions;
  /** Verified tokens kept per provider configuration; default 10,000. */
  readonly cacheEntries?: number;
  /** bcrypt verifications at once (default half the cores) and queued beyond them (default 16); more get 503. */
  readonly verifyRunning?: number;
  readonly verifyWaiting?: number;
}

/** A provider ready to verify: its key lookup and its token cache. */
interface CompiledProvider {
  readonly provider: JWTProvider;
  readonly keys: KeyLookup | undefined;
  readonly cache: VerifiedTokenCache;
  readonly skewMs: number;
}

/** What a cached identity means for one route: allowed (one frozen outcome) or refused with these scopes. */
type Decision = AuthOutcome | { readonly forbidden: readonly string[] };

export class AuthEnforcer {
  private readonly fetchers = new Map<string, KeySetFetcher>();
  private readonly providers = new Map<string, CompiledProvider>();
  private readonly oidcs = new Map<string, OIDCContext>();
  private byJWT = new WeakMap<JWTAuth, CompiledProvider[]>();
  private byOIDC = new WeakMap<OIDCAuth, OIDCContext>();
  private readonly fetchFn: typeof fetch;
  private logged = new Set<string>();
  /** Fetcher keys each policy (`namespace/name`) uses, from the last model. */
  private policyFetchers = new Map<string, Set<string>>();
  private keyWatch: ReturnType<typeof setInterval> | undefined;
  /** Basic auth and API keys (credentials/). */
  readonly credentials: CredentialChecks;
  /** Forward authentication (forward-auth.ts), asked after the route's other methods admit. */
  readonly forward: ForwardAuth;

  constructor(private readonly opts: AuthEnforcerOptions = {}) {
    this.fetchFn = opts.fetch ?? fetch;
    this.credentials = new CredentialChecks(opts);
    this.forward = new ForwardAuth(opts);
  }

  /** Start fetchers for the providers the model uses and stop the others. Caches of unchanged providers stay. */
  update(model: GatewayModel): void {
    const usedFetchers = new Set<string>();
    const usedProviders = new Set<string>();
    const usedOIDC = new Set<string>();
    this.byJWT = new WeakMap();
    this.byOIDC = new WeakMap();
    const failing = new Set<string>();
    const policyFetchers = new Map<string, Set<string>>();
    const auths = new Set<RouteAuth>();
    for (const l of model.listeners)
      for (const vh of l.virtualHosts)
        for (const r of vh.routes) {
          const auth = r.auth;
          if (auth === undefined) continue;
          auths.add(auth);
          if (auth.failClosed !== undefined) {
            failing.add(`${auth.policy.namespace}/${auth.policy.name}: ${auth.failClosed}`);
            continue;
          }
          if (auth.jwt && !this.byJWT.has(auth.jwt))
            this.byJWT.set(
              auth.jwt,
              auth.jwt.providers.map((p) => this.provider(p, usedProviders, usedFetchers)),
            );
          if (auth.oidc && !this.byOIDC.has(auth.oidc))
            this.byOIDC.set(auth.oidc, this.oidcContext(auth.oidc, usedOIDC, usedFetchers));
          const policy = `${auth.policy.namespace}/${auth.policy.name}`;
          const mine = policyFetchers.get(policy) ?? new Set<string>();
          for (const k of fetcherKeys(auth)) mine.add(k);
          if (mine.size > 0) policyFetchers.set(policy, mine);
        }
    this.policyFetchers = policyFetchers;
    this.credentials.retain(auths);
    // Logged once per distinct problem, not on every model update (endpoint churn updates often).
    for (const f of failing)
      if (!this.logged.has(f))
        log.warn("auth policy cannot be enforced; its routes answer 401", { policy: f });
    this.logged = failing;
    for (const [k, f] of this.fetchers) {
      if (usedFetchers.has(k)) continue;
      f.close();
      this.fetchers.delete(k);
    }
    for (const k of this.providers.keys()) if (!usedProviders.has(k)) this.providers.delete(k);
    for (const k of this.oidcs.keys()) if (!usedOIDC.has(k)) this.oidcs.delete(k);
  }

  /** Resolves when every fetcher has finished its first fetch (success or not). For tests and readiness. */
  async ready(): Promise<void> {
    await Promise.all([...this.fetchers.values()].map((f) => f.started));
  }

  /** Every fetcher's state, for readiness and status: issuer, location, whether keys are held, last error. */
  keySets(): { issuer: string; location: string; hasKeys: boolean; error?: string }[] {
    return [...this.fetchers.values()].map((f) => ({
      issuer: f.location.issuer,
      location: f.location.jwksUrl ?? "discovery",
      hasKeys: f.hasKeys,
      ...(f.lastError !== undefined ? { error: f.lastError } : {}),
    }));
  }

  /** Policies that fetch their keys (JWKS URL or discovery), by `namespace/name`. */
  remoteKeyPolicies(): Set<string> {
    return new Set(this.policyFetchers.keys());
  }

  /** Policies none of whose fetchers could load keys after trying, with why (`namespace/name` → reason). */
  unavailableKeys(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [policy, keys] of this.policyFetchers) {
      for (const k of keys) {
        const f = this.fetchers.get(k);
        if (f === undefined || !f.settled || f.hasKeys) continue;
        const where = f.location.jwksUrl ?? `discovery for ${f.location.issuer}`;
        out.set(policy, `signing keys from ${where} unavailable: ${f.lastError ?? "unknown error"}`);
        break;
      }
    }
    return out;
  }

  /** Calls `changed` (at most once a second) whenever `unavailableKeys()` changes; until close(). */
  watchKeys(changed: () => void, everyMs = 1000): void {
    clearInterval(this.keyWatch);
    let last = signature(this.unavailableKeys());
    this.keyWatch = setInterval(() => {
      const now = signature(this.unavailableKeys());
      if (now === last) return;
      last = now;
      changed();
    }, everyMs);
    this.keyWatch.unref?.();
  }

  close(): void {
    clearInterval(this.keyWatch);
    for (const f of this.fetchers.values()) f.close();
    this.fetchers.clear();
  }

  /** Authenticate and authorize one request: synchronous when its token or session is cached; never throws. */
  check(auth: RouteAuth, req: Request, url: RequestURL): AuthOutcome | Promise<AuthOutcome> {
    if (this.needsRequest(auth, req.headers, url)) return this.viaOIDC(auth, auth.oidc as OIDCAuth, req, url);
    return this.checkToken(auth, req.headers, url.query);
  }

  /**
   * Whether `check` needs the Request: OIDC's login flow (its callback and logout paths, or a request with
   * neither a bearer token nor a session cookie this process has verified: a redirect, an unseal, a
   * refresh). Everything else is decided from the head alone by `checkToken` (the raw front's path).
   */
  needsRequest(auth: RouteAuth, headers: HeaderReader, url: RequestURL): boolean {
    const oidc = auth.oidc;
    if (oidc === undefined || auth.failClosed !== undefined) return false;
    if (isOIDCPath(oidc, url)) return true;
    if (auth.jwt !== undefined && extractToken(auth.jwt.tokenSources, headers, url.query) !== undefined)
      return false;
    const ctx = this.byOIDC.get(oidc);
    return ctx === undefined || cachedSession(oidc, headers, ctx) === undefined;
  }

  /**
   * `check` from headers and the raw query alone (the raw-socket front calls it without building a
   * Request), for every request `needsRequest` leaves out. Same outcomes, same caches.
   */
  checkToken(auth: RouteAuth, headers: HeaderReader, query: string): AuthOutcome | Promise<AuthOutcome> {
    const realm = `${auth.policy.namespace}/${auth.policy.name}`;
    if (auth.failClosed !== undefined) return this.refuse(unauthorized(realm), "policy_invalid");
    const jwt = auth.jwt;
    if (jwt !== undefined) {
      const token = extractToken(jwt.tokenSources, headers, query);
      if (token !== undefined) return this.viaToken(auth, jwt, token, realm);
    }
    // A bearer token wins over the session cookie (API clients on a route browsers also use).
    const oidc = auth.oidc;
    if (oidc !== undefined) {
      const ctx = this.byOIDC.get(oidc);
      const hit = ctx && cachedSession(oidc, headers, ctx);
      // Expired between needsRequest and here: refused as a login would be for an API client.
      return hit ? this.grant(auth, hit.identity, hit) : this.refuse(unauthorized(realm), "login_required");
    }
    if (auth.basic !== undefined || auth.apiKeys !== undefined) {
      const c = this.credentials.check(auth, headers, query);
      if (c === undefined) return this.refuse(credentialRefusal(auth), "missing_token");
      return c instanceof Promise
        ? c.then((r) => this.afterCredential(auth, r, query))
        : this.afterCredential(auth, c, query);
    }
    // Forward authentication alone (no token, no credentials): the service decides (guards.ts asks it next).
    if (auth.external !== undefined && jwt === undefined)
      return this.grant(auth, EXTERNAL_IDENTITY, undefined);
    return this.refuse(unauthorized(realm), "missing_token");
  }

  private afterCredential(auth: RouteAuth, c: CredentialResult, query: string): AuthOutcome {
    if (!c.ok) return this.refuse(credentialRefusal(auth, c), c.reason);
    const o = this.grant(auth, c.identity, c.entry);
    return c.strip === undefined || !o.ok ? o : { ...o, query: withoutParam(query, c.strip) };
  }

  private viaToken(
    auth: RouteAuth,
    jwt: JWTAuth,
    token: string,
    realm: string,
  ): AuthOutcome | Promise<AuthOutcome> {
    if (token.length > maxTokenLength)
      return this.refuse(unauthorized(realm, "invalid_token", "token too large"), "invalid_token");
    const compiled = this.byJWT.get(jwt) ?? this.compileLate(jwt);
    const hash = tokenHash(token);
    const now = Date.now();
    for (const c of compiled) {
      const hit = c.cache.get(hash, now, c.skewMs);
      if (hit !== undefined) return this.grant(auth, hit.identity, hit);
    }
    const provider = pickProvider(jwt.providers, token);
    // By position: equal provider configurations share one compiled entry (and cache) across policies.
    const c = provider === undefined ? undefined : compiled[jwt.providers.indexOf(provider)];
    if (c === undefined)
      return this.refuse(unauthorized(realm, "invalid_token", "issuer not accepted"), "invalid_token");
    return this.verify(auth, c, token, hash, realm);
  }

  private async verify(
    auth: RouteAuth,
    c: CompiledProvider,
    token: string,
    hash: string,
    realm: string,
  ): Promise<AuthOutcome> {
    if (c.keys === undefined) return this.refuse(unauthorized(realm), "keys_unavailable");
    const result = await verifyJWT(token, c.provider, c.keys);
    if (!result.ok) {
      const description = result.reason === "keys_unavailable" ? undefined : result.description;
      const error = result.reason === "keys_unavailable" ? undefined : "invalid_token";
      return this.refuse(unauthorized(realm, error, description), result.reason);
    }
    return this.grant(auth, result.identity, c.cache.set(hash, result.identity));
  }

  private async viaOIDC(
    auth: RouteAuth,
    oidc: OIDCAuth,
    req: Request,
    url: RequestURL,
  ): Promise<AuthOutcome> {
    const ctx = this.byOIDC.get(oidc) ?? this.oidcContext(oidc, new Set(), new Set());
    try {
      const r = await handleOIDC(auth, oidc, req, url, ctx);
      if (!r.ok) return this.refuse(r.response, r.reason);
      const granted = this.grant(auth, r.identity, undefined);
      if (!granted.ok || r.setCookie === undefined) return granted;
      return { ...granted, responseHeaders: [["set-cookie", r.setCookie]] };
    } catch (err) {
      log.error("oidc check failed", { policy: `${auth.policy.namespace}/${auth.policy.name}`, error: err });
      return this.refuse(unauthorized(`${auth.policy.namespace}/${auth.policy.name}`), "oidc_error");
    }
  }

  /** Authorization and claim headers for an identity; memoised on the cache entry per route policy. */
  private grant(
    auth: RouteAuth,
    identity: Identity,
    entry: Pick<CachedToken, "derived"> | undefined,
  ): AuthOutcome {
    let decision = entry?.derived.get(auth) as Decision | undefined;
    if (decision === undefined) {
      const verdict = authorize(auth.authorization, identity);
      const extra = credentialHeaders(auth, identity);
      decision = verdict.ok
        ? Object.freeze({
            ok: true as const,
            identity,
            removeHeaders: Object.freeze([...auth.claimToHeaders.map((c) => c.header), ...extra.remove]),
            setHeaders: Object.freeze([...claimHeaders(auth.claimToHeaders, identity), ...extra.set]),
          })
        : { forbidden: verdict.missingScopes };
      entry?.derived.set(auth, decision);
    }
    if ("forbidden" in decision)
      return this.refuse(
        forbidden(`${auth.policy.namespace}/${auth.policy.name}`, decision.forbidden),
        "forbidden",
      );
    return decision;
  }

  private refuse(response: Response, reason: AuthFailureReason | "redirect"): AuthOutcome {
    if (reason !== "redirect") this.opts.metrics?.authFailures.inc({ reason });
    return { ok: false, response, reason };
  }

  private compileLate(jwt: JWTAuth): CompiledProvider[] {
    const compiled = jwt.providers.map((p) => this.provider(p, new Set(), new Set()));
    this.byJWT.set(jwt, compiled);
    return compiled;
  }

  private provider(p: JWTProvider, used: Set<string>, usedFetchers: Set<string>): CompiledProvider {
    const key = JSON.stringify(p);
    used.add(key);
    const keys =
      p.keys.type === "Inline"
        ? staticKeys(p.keys.jwks)
        : this.fetcher(p.issuer, p.keys.type === "RemoteJWKS" ? p.keys.url : undefined, usedFetchers).getKey;
    let c = this.providers.get(key);
    if (c === undefined || c.keys !== keys) {
      c = {
        provider: p,
        keys,
        cache: c?.cache ?? new VerifiedTokenCache(this.opts.cacheEntries),
        skewMs: p.clockSkewSeconds * 1000,
      };
      this.providers.set(key, c);
    }
    return c;
  }

  private oidcContext(oidc: OIDCAuth, used: Set<string>, usedFetchers: Set<string>): OIDCContext {
    const key = JSON.stringify(oidc);
    used.add(key);
    const fetcher = this.fetcher(oidc.issuer, undefined, usedFetchers);
    let ctx = this.oidcs.get(key);
    if (ctx === undefined || ctx.fetcher !== fetcher) {
      ctx = {
        fetcher,
        client: { fetch: this.fetchFn, timeoutMs: this.opts.keys?.timeoutMs ?? 5000 },
        sessions: new VerifiedTokenCache(this.opts.cacheEntries),
      };
      this.oidcs.set(key, ctx);
    }
    return ctx;
  }

  private fetcher(issuer: string, jwksUrl: string | undefined, used: Set<string>): KeySetFetcher {
    const key = fetcherKey(issuer, jwksUrl);
    used.add(key);
    let f = this.fetchers.get(key);
    if (f === undefined) {
      const location = jwksUrl !== undefined ? { issuer, jwksUrl } : { issuer, discovery: true as const };
      f = new KeySetFetcher(location, { ...this.opts.keys, fetch: this.fetchFn });
      this.fetchers.set(key, f);
    }
    return f;
  }
}

function signature(m: ReadonlyMap<string, string>): string {
  return Array.from(m, ([k, v]) => `${k}=${v}`)
    .sort()
    .join("\n");
}
