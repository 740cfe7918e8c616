/**
 * The route-wide checks an HTTPRoute and a GRPCRoute make before their rules (GRPCRoute's CRD has
 * HTTPRoute's limits): item counts, unique rule names, and the hostnames parsed.
 */
import type { HostPattern } from "../../common/host-patterns.ts";
import { arrayOf } from "../../common/objects.ts";
import { parseGatewayHostname } from "../gateway-hostnames.ts";

/** Route-wide limits of HTTPRoute v1.6.1 (CRD MaxItems and the CEL total-matches rule). */
export const routeLimits = { hostnames: 16, parentRefs: 32, rules: 16, totalMatches: 128 } as const;

/** The route-wide part of either spec. */
export interface RouteWideSpec {
  readonly hostnames?: readonly string[];
  readonly parentRefs?: readonly unknown[];
  readonly rules?: readonly { readonly name?: string; readonly matches?: readonly unknown[] }[];
}

/** The route's hostnames, or why the route as a whole cannot be accepted. */
export function checkRouteWide(
  spec: RouteWideSpec,
):
  | { readonly ok: true; readonly hostnames: HostPattern[] }
  | { readonly ok: false; readonly message: string } {
  const fail = (message: string) => ({ ok: false as const, message });
  const rules = arrayOf(spec.rules);
  if (arrayOf(spec.hostnames).length > routeLimits.hostnames)
    return fail(`spec.hostnames: at most ${routeLimits.hostnames} allowed`);
  if (arrayOf(spec.parentRefs).length > routeLimits.parentRefs)
    return fail(`spec.parentRefs: at most ${routeLimits.parentRefs} allowed`);
  if (rules.length > routeLimits.rules) return fail(`spec.rules: at most ${routeLimits.rules} allowed`);
  const totalMatches = rules.reduce((n, r) => n + Math.max(1, arrayOf(r.matches).length), 0);
  if (totalMatches > routeLimits.totalMatches)
    return fail(`spec.rules: at most ${routeLimits.totalMatches} matches in all rules together`);
  const names = rules.map((r) => r.name).filter((n): n is string => typeof n === "string");
  if (new Set(names).size !== names.length)
    return fail("spec.rules: rule names must be unique within the route");
  const hostnames: HostPattern[] = [];
  for (const [i, h] of arrayOf(spec.hostnames).entries()) {
    const parsed = parseGatewayHostname(h);
    if (!parsed.ok) return fail(`spec.hostnames[${i}] "${h}": ${parsed.message}`);
    if (!hostnames.some((x) => x.hostname === parsed.host.hostname)) hostnames.push(parsed.host);
  }
  return { ok: true, hostnames };
}
