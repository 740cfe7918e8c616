/**
 * The one immutable identity a request carries after authentication. Built once per verified token (and
 * cached with it), deeply frozen, so the rate limiter and header filters read it without re-parsing and
 * nothing downstream can change what was verified.
 */

export interface Identity {
  /** `sub` claim ("" when the token has none). */
  readonly sub: string;
  /** `iss` claim, equal to the provider's issuer. */
  readonly iss: string;
  /** Scopes granted: the `scope` string split on spaces, or the `scp` array/string. */
  readonly scopes: readonly string[];
  /** Expiry (`exp`) in milliseconds since the epoch. */
  readonly expiresAtMs: number;
  /**
   * How it was verified: a bearer JWT, an OIDC session cookie, a basic-auth user (`sub` is the user name)
   * or an API key (`sub` is the key's name); `address`: no credentials, the client's address was
   * enough (`satisfy: Any`; `sub` is ""); `external`: only the forward-auth service decided (`sub` is "").
   */
  readonly via: "jwt" | "oidc" | "basic" | "apiKey" | "address" | "external";
  /** Every verified claim, deeply frozen. */
  readonly claims: Readonly<Record<string, unknown>>;
}

export function identityFromClaims(claims: Record<string, unknown>, via: Identity["via"]): Identity {
  const frozen = deepFreeze(structuredClone(claims));
  return Object.freeze({
    sub: typeof frozen.sub === "string" ? frozen.sub : "",
    iss: typeof frozen.iss === "string" ? frozen.iss : "",
    scopes: Object.freeze(scopesOf(frozen)),
    expiresAtMs: typeof frozen.exp === "number" ? frozen.exp * 1000 : 0,
    via,
    claims: frozen,
  });
}

function scopesOf(claims: Record<string, unknown>): string[] {
  const raw = claims.scope ?? claims.scp;
  if (typeof raw === "string") return raw.split(" ").filter((s) => s !== "");
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === "string");
  return [];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A claim by name; a dotted name (`realm.roles`) walks into objects when no top-level claim has it. */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  if (!name.includes(".")) return undefined;
  let cur: unknown = claims;
  for (const part of name.split(".")) {
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * A claim as a header value: strings, numbers and booleans as text, arrays of those joined with `,`.
 * Objects, and anything with control characters (which could split a header), give undefined.
 */
export function claimHeaderValue(value: unknown): string | undefined {
  let text: string;
  if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "boolean") text = String(value);
  else if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null))
    text = value.map(String).join(",");
  else return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  return /[\u0000-\u001f\u007f]/.test(text) ? undefined : text;
}

/** The identity of a basic-auth user or an API key: its name as `sub` (and as the only claim). */
export function namedIdentity(name: string, via: "basic" | "apiKey"): Identity {
  return Object.freeze({
    sub: name,
    iss: "",
    scopes: Object.freeze([]),
    expiresAtMs: 0,
    via,
    claims: Object.freeze({ sub: name }),
  });
}
