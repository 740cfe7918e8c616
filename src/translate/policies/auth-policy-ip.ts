/**
 * An AuthPolicy's client address lists, `spec.ipAllowList` and `spec.ipDenyList` (docs/auth.md): two flat
 * lists of IPv4/IPv6 CIDRs or addresses, deny checked first, then allow when not empty. Envoy Gateway's
 * SecurityPolicy says the same with `authorization.rules` (each an Allow or Deny action on `clientCIDRs`,
 * first match wins) and a `defaultAction`; two lists in nginx's fixed order say what ingress-nginx's
 * annotations say, cannot be written in an order that opens more than meant, and compile to two sorted
 * range sets (model/ip-ranges.ts). What they cannot say: allowing one address inside a denied range.
 * A policy may hold only these lists: its routes then get no authentication, only the address check.
 */
import type { IPAccessList, SourceRef } from "../../model/index.ts";
import { parseRange } from "../../model/ip-ranges.ts";

/** The policy's lists, checked; entries that are not addresses or CIDRs go to `errors` (field, index, value). */
export function policyIPAccess(policy: SourceRef, spec: unknown, errors: string[]): IPAccessList | undefined {
  const s = (spec ?? {}) as { ipAllowList?: unknown; ipDenyList?: unknown };
  const allow = cidrs(s.ipAllowList, "spec.ipAllowList", errors);
  const deny = cidrs(s.ipDenyList, "spec.ipDenyList", errors);
  if (allow.length === 0 && deny.length === 0) return undefined;
  return { source: policy, allow, deny };
}

function cidrs(list: unknown, field: string, errors: string[]): string[] {
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  list.forEach((entry, i) => {
    const text = typeof entry === "string" ? entry.trim() : "";
    if (parseRange(text) === undefined) {
      const shown = typeof entry === "string" ? entry.slice(0, 60) : String(entry);
      errors.push(`${field}[${i}] ${JSON.stringify(shown)}: not an IPv4 or IPv6 address or CIDR`);
    } else if (!out.includes(text)) out.push(text);
  });
  return out;
}

const listFields = new Set(["ipAllowList", "ipDenyList", "satisfy"]);

/**
 * True when the spec asks for address lists and nothing else (no authentication, no identity rules;
 * `satisfy` may be there, and is reported: it belongs to the policy that authenticates).
 */
export function onlyIPLists(spec: unknown): boolean {
  if (spec === null || typeof spec !== "object") return false;
  const keys = Object.keys(spec).filter((k) => k !== "targetRefs" && k !== "satisfy");
  return keys.length > 0 && keys.every((k) => listFields.has(k));
}

/** True when the spec names either list, even wrongly (an invalid policy that does then refuses everyone). */
export function asksIPLists(spec: unknown): boolean {
  try {
    return spec !== null && typeof spec === "object" && ("ipAllowList" in spec || "ipDenyList" in spec);
  } catch {
    return true; // a spec that cannot even be looked at: closed
  }
}
