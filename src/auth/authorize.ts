/**
 * Authorization on a verified identity (403 when a rule fails) and the headers built from its claims.
 */
import type { AuthorizationRules, ClaimToHeader } from "../model/index.ts";
import { claimAt, claimHeaderValue, type Identity } from "./identity.ts";

export type AuthorizationResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly missingScopes: string[] };

const allowed: AuthorizationResult = { ok: true };

export function authorize(rules: AuthorizationRules, identity: Identity): AuthorizationResult {
  if (rules.requiredScopes.length > 0) {
    const missing = rules.requiredScopes.filter((s) => !identity.scopes.includes(s));
    if (missing.length > 0) return { ok: false, missingScopes: missing };
  }
  for (const rule of rules.requiredClaims) {
    const value = claimAt(identity.claims, rule.name);
    const have = Array.isArray(value) ? value : [value];
    if (
      !have.some(
        (v) =>
          (typeof v === "string" || typeof v === "number" || typeof v === "boolean") &&
          rule.values.includes(String(v)),
      )
    )
      return { ok: false, missingScopes: [] };
  }
  return allowed;
}

/** `[header, value]` for each claim present and printable; absent claims set no header. */
export function claimHeaders(list: readonly ClaimToHeader[], identity: Identity): [string, string][] {
  const out: [string, string][] = [];
  for (const c of list) {
    const value = claimHeaderValue(claimAt(identity.claims, c.claim));
    if (value !== undefined) out.push([c.header, value]);
  }
  return out;
}
