import type { HostMatchType } from "../../model/index.ts";
import { isIP } from "../../model/ip-syntax.ts";

/** A virtual host's name and how it matches; `*` with `Any` for rules that name no host. */
export interface HostPattern {
  readonly hostname: string;
  readonly match: HostMatchType;
}

export type HostParse =
  | { readonly ok: true; readonly host: HostPattern }
  | { readonly ok: false; readonly message: string };

export const anyHost: HostPattern = { hostname: "*", match: "Any" };

const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * An Ingress rule host, validated as the API server does (so a folder-mode manifest that kubectl would
 * refuse is refused here too, with the same reasons). `*.foo.com` matches exactly one extra label
 * (Ingress semantics, unlike Gateway API hostnames).
 */
export function parseIngressHost(host: string | undefined): HostParse {
  if (host === undefined || host === "") return { ok: true, host: anyHost };
  if (typeof host !== "string") return { ok: false, message: "must be a string" };
  return parseDnsPattern(host, "WildcardOneLabel");
}

/**
 * The rules Ingress hosts and Gateway API hostnames share: a lower-case RFC 1123 subdomain, or `*.`
 * followed by one. Upper case is an error rather than silently lower-cased, because the API server would
 * reject it and we would otherwise serve something the cluster never could. IP addresses and ports are
 * refused. `wildcard` says how a `*.` pattern matches.
 */
export function parseDnsPattern(host: string, wildcard: "WildcardOneLabel" | "WildcardAnyLabels"): HostParse {
  if (isIP(host) !== 0 || /^\[.*\]$/.test(host)) {
    return { ok: false, message: "must be a DNS name, not an IP address" };
  }
  if (host.includes(":")) return { ok: false, message: "must be a DNS name without a port" };
  if (host !== host.toLowerCase()) return { ok: false, message: "must be lower-case" };
  if (host.length > 253) return { ok: false, message: "must be no more than 253 characters" };
  const isWildcard = host.startsWith("*.");
  const rest = isWildcard ? host.slice(2) : host;
  if (rest.includes("*")) {
    return {
      ok: false,
      message: 'a wildcard is allowed only as the whole first label, e.g. "*.example.com"',
    };
  }
  const problem = subdomainProblem(rest);
  if (problem) return { ok: false, message: problem };
  return { ok: true, host: { hostname: host, match: isWildcard ? wildcard : "Exact" } };
}

/** Why `name` is not an RFC 1123 subdomain, or undefined when it is one. */
export function subdomainProblem(name: string): string | undefined {
  for (const part of name.split(".")) {
    if (part.length > 63) return `label "${part.slice(0, 20)}…" must be no more than 63 characters`;
    if (!label.test(part)) {
      return (
        "must be a valid RFC 1123 subdomain: lower-case letters, digits, '-' and '.', " +
        "each label starting and ending with a letter or digit"
      );
    }
  }
  return undefined;
}
