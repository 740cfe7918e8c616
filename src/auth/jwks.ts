/**
 * One key fetcher per issuer and key location: the JWKS is fetched at start and refreshed in the
 * background; a failed refresh keeps the last good key set. A token naming an unknown `kid` may trigger
 * one early refresh, at most once per cooldown, so unknown kids cannot make us hammer the provider.
 * URLs only ever come from configuration (or the configured issuer's discovery document, whose `issuer`
 * must equal ours exactly), never from a token.
 */
import {
  createLocalJWKSet,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";
import type { RouteAuth } from "../model/index.ts";
import { logger } from "../observability/logger.ts";

const log = logger.child({ component: "auth-jwks" });

export interface KeySetOptions {
  readonly fetch?: typeof fetch;
  /** Per request (discovery or JWKS); default 5 s. */
  readonly timeoutMs?: number;
  /** Background refresh period; default 5 min. */
  readonly refreshMs?: number;
  /** Retry period while no key set was ever fetched; default 10 s. */
  readonly retryMs?: number;
  /** Minimum time between refreshes triggered by unknown kids; default 30 s. */
  readonly cooldownMs?: number;
}

/** What the configured issuer's discovery document says (the fields Gatehouse uses). */
export interface ProviderMetadata {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  readonly end_session_endpoint?: string;
}

export type KeyLookup = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

/** Where the keys come from: a JWKS URL, or discovery from the issuer. */
export type KeyLocation = { readonly issuer: string } & (
  | { readonly jwksUrl: string; readonly discovery?: undefined }
  | { readonly discovery: true; readonly jwksUrl?: undefined }
);

/** Largest discovery or JWKS document accepted. */
const maxDocumentBytes = 512 * 1024;

export class KeySetFetcher {
  private keys: KeyLookup | undefined;
  private meta: ProviderMetadata | undefined;
  private lastFetchMs = 0;
  private inflight: Promise<boolean> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Why the last fetch failed; undefined after a success. */
  lastError: string | undefined;
  private readonly fetchFn: typeof fetch;
  private readonly o: Required<Omit<KeySetOptions, "fetch">>;
  /** Resolves once the first fetch finished (either way). */
  readonly started: Promise<void>;
  /** True once the first fetch finished (either way): before that, no keys means "not yet", not "failed". */
  settled = false;

  constructor(
    readonly location: KeyLocation,
    options: KeySetOptions = {},
  ) {
    this.fetchFn = options.fetch ?? fetch;
    this.o = {
      timeoutMs: options.timeoutMs ?? 5000,
      refreshMs: options.refreshMs ?? 300_000,
      retryMs: options.retryMs ?? 10_000,
      cooldownMs: options.cooldownMs ?? 30_000,
    };
    this.started = this.refresh().then(() => {
      this.settled = true;
      this.schedule();
    });
  }

  /** The discovery document, once fetched (discovery locations only). */
  get metadata(): ProviderMetadata | undefined {
    return this.meta;
  }

  /** True once a key set was fetched; it stays true across failed refreshes. */
  get hasKeys(): boolean {
    return this.keys !== undefined;
  }

  /** A jose key getter: the key for a token's header, refreshing early (once per cooldown) on an unknown kid. */
  readonly getKey: KeyLookup = async (header, token) => {
    if (this.keys === undefined) {
      await this.refreshIfCool();
      if (this.keys === undefined) throw new KeysUnavailable(this.lastError ?? "no key set fetched yet");
    }
    try {
      return await this.keys(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || !(await this.refreshIfCool())) throw err;
      return await (this.keys as KeyLookup)(header, token);
    }
  };

  /** Fetch now (single flight). Resolves true when a new key set is in place. */
  refresh(): Promise<boolean> {
    this.inflight ??= this.fetchKeys().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private async refreshIfCool(): Promise<boolean> {
    if (this.inflight) return this.inflight;
    if (Date.now() - this.lastFetchMs < this.o.cooldownMs) return false;
    return this.refresh();
  }

  private schedule(): void {
    if (this.closed) return;
    const wait = this.keys === undefined ? this.o.retryMs : this.o.refreshMs;
    this.timer = setTimeout(() => {
      this.refresh().then(() => this.schedule());
    }, wait);
    this.timer.unref?.();
  }

  private async fetchKeys(): Promise<boolean> {
    this.lastFetchMs = Date.now();
    const where = this.location.jwksUrl ?? `${this.location.issuer} (discovery)`;
    try {
      let jwksUrl = this.location.jwksUrl;
      if (this.location.discovery) {
        const meta = await this.discover();
        this.meta = meta;
        jwksUrl = meta.jwks_uri;
      }
      const doc = (await this.getJSON(jwksUrl as string)) as JSONWebKeySet;
      if (!Array.isArray(doc?.keys)) throw new Error('the JWKS has no "keys" array');
      const keys = createLocalJWKSet(doc);
      if (this.closed) return false;
      this.keys = keys;
      if (this.lastError !== undefined)
        log.info("key set fetched", { issuer: this.location.issuer, url: jwksUrl });
      this.lastError = undefined;
      return true;
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      const kept = this.keys !== undefined ? "keeping the last good key set" : "no key set: requests get 401";
      if (!this.closed)
        log.warn("key set fetch failed", {
          issuer: this.location.issuer,
          url: where,
          error: this.lastError,
          kept,
        });
      return false;
    }
  }

  private async discover(): Promise<ProviderMetadata> {
    const issuer = this.location.issuer;
    const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    const doc = (await this.getJSON(url)) as Partial<ProviderMetadata>;
    // OpenID Connect Discovery §4.3: the document's issuer must be identical to the one configured.
    if (doc?.issuer !== issuer)
      throw new Error(
        `discovery document names issuer ${JSON.stringify(doc?.issuer)}, expected ${JSON.stringify(issuer)}`,
      );
    if (typeof doc.jwks_uri !== "string" || !/^https?:\/\//.test(doc.jwks_uri))
      throw new Error("discovery document has no usable jwks_uri");
    return doc as ProviderMetadata;
  }

  private async getJSON(url: string): Promise<unknown> {
    const res = await this.fetchFn(url, {
      signal: AbortSignal.timeout(this.o.timeoutMs),
      headers: { accept: "application/json" },
      redirect: "error",
    });
    if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
    const text = await res.text();
    if (text.length > maxDocumentBytes)
      throw new Error(`GET ${url}: document over ${maxDocumentBytes} bytes`);
    return JSON.parse(text);
  }
}

/** No key set could be fetched for the provider (distinct from a token naming an unknown key). */
export class KeysUnavailable extends Error {}

/** A static key set (keys from a Secret): no fetching, same lookup shape. */
export function staticKeys(jwks: string): KeyLookup | undefined {
  try {
    const doc = JSON.parse(jwks) as JSONWebKeySet;
    return Array.isArray(doc?.keys) ? createLocalJWKSet(doc) : undefined;
  } catch {
    return undefined;
  }
}

/** One fetcher per issuer and key location, shared by every policy naming them. */
export function fetcherKey(issuer: string, jwksUrl: string | undefined): string {
  return `${issuer}\n${jwksUrl ?? "discovery"}`;
}

/** The fetchers a route's auth uses (inline keys need none). */
export function fetcherKeys(auth: RouteAuth): string[] {
  const keys: string[] = [];
  for (const p of auth.jwt?.providers ?? []) {
    if (p.keys.type === "RemoteJWKS") keys.push(fetcherKey(p.issuer, p.keys.url));
    else if (p.keys.type === "Discovery") keys.push(fetcherKey(p.issuer, undefined));
  }
  if (auth.oidc !== undefined) keys.push(fetcherKey(auth.oidc.issuer, undefined));
  return keys;
}
