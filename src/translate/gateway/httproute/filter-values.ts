/**
 * The values of HTTPRoute filters as model filters and actions, checked: the one place that reads a
 * redirect, a URL rewrite, a CORS block or header edits, for the Gateway API filters (filters.ts) and
 * for the same blocks in Gatehouse's HTTPRouteFilter (extension-filter.ts), which may also say what
 * Gateway API cannot (`extended`: a path replaced by a regular expression's substitution, a Host with a port).
 * Each builder returns the model value, or a message naming the field that is wrong.
 */
import { fieldValueProblem, isToken } from "../../../model/http-syntax.ts";
import type { CORSFilter, HeaderEdits, PathModifier, RedirectAction } from "../../../model/index.ts";
import { compileRegex, LEADING_IGNORE_CASE } from "../../../proxy/match/regex/regex.ts";
import type { HTTPRouteFilter } from "../../../sources/schema/gateway.ts";
import type { RouteReason } from "../../../status/reasons.ts";
import { arrayOf } from "../../common/objects.ts";
import { parseGatewayHostname } from "../gateway-hostnames.ts";

/** Why a rule cannot be served: its Accepted reason and a message naming the field. */
export interface RuleInvalid {
  readonly reason: typeof RouteReason.UnsupportedValue | typeof RouteReason.IncompatibleFilters;
  readonly message: string;
}

/** What a path modifier may be where it is written. */
export interface PathContext {
  /** The rule has exactly one PathPrefix match, which ReplacePrefixMatch needs. */
  readonly prefixMatch: boolean;
  /**
   * HTTPRouteFilter only: `ReplaceRegexMatch` paths, and a URLRewrite hostname with a port (the Host
   * header sent upstream, as ingress-nginx's `upstream-vhost` may set it).
   */
  readonly extended?: boolean;
}

/** A path modifier as the Gateway API and HTTPRouteFilter write it. */
export interface PathModifierInput {
  readonly type: string;
  readonly replaceFullPath?: string;
  readonly replacePrefixMatch?: string;
  readonly replaceRegexMatch?: { readonly pattern: string; readonly substitution: string };
}

export type RedirectInput = NonNullable<HTTPRouteFilter["requestRedirect"]> & {
  readonly path?: PathModifierInput;
};

const redirectCodes = new Set([301, 302, 303, 307, 308]);

/** A RequestRedirect as the route's action (no `location`: the caller adds what Gateway API lacks). */
export function redirectAction(r: RedirectInput, at: PathContext): RedirectAction | string {
  const scheme = r.scheme;
  if (scheme !== undefined && scheme !== "http" && scheme !== "https")
    return `scheme "${scheme}" is not http or https`;
  const statusCode = r.statusCode ?? 302;
  if (!redirectCodes.has(statusCode)) return `statusCode ${statusCode} is not one of 301, 302, 303, 307, 308`;
  if (r.port !== undefined && (r.port < 1 || r.port > 65535)) return `port ${r.port} is out of range`;
  if (r.hostname !== undefined && !preciseHostname(r.hostname))
    return `hostname "${r.hostname}" is not a valid hostname`;
  const path = r.path ? pathModifier(r.path, at) : undefined;
  if (typeof path === "string") return `path: ${path}`;
  return {
    kind: "Redirect",
    statusCode,
    ...(scheme ? { scheme } : {}),
    ...(r.hostname ? { hostname: r.hostname } : {}),
    ...(r.port !== undefined ? { port: r.port } : {}),
    ...(path ? { path } : {}),
  };
}

/** A URLRewrite filter. */
export function urlRewrite(
  r: { readonly hostname?: string; readonly path?: PathModifierInput },
  at: PathContext,
): { kind: "URLRewrite"; hostname?: string; path?: PathModifier } | string {
  if (r.hostname !== undefined && !preciseHostname(at.extended ? withoutPort(r.hostname) : r.hostname))
    return `hostname "${r.hostname}" is not a valid hostname${at.extended ? " (with an optional :port)" : ""}`;
  const path = r.path ? pathModifier(r.path, at) : undefined;
  if (typeof path === "string") return `path: ${path}`;
  return { kind: "URLRewrite", ...(r.hostname ? { hostname: r.hostname } : {}), ...(path ? { path } : {}) };
}

/** A CORS filter; `style` keeps ingress-nginx's behaviour (model CORSFilter). */
export function corsFilter(
  c: NonNullable<HTTPRouteFilter["cors"]>,
  style?: "IngressNginx",
): CORSFilter | string {
  const problem = corsProblem(c);
  if (problem) return problem;
  return {
    kind: "CORS",
    allowOrigins: [...arrayOf(c.allowOrigins)],
    allowMethods: [...arrayOf(c.allowMethods)],
    allowHeaders: [...arrayOf(c.allowHeaders)],
    exposeHeaders: [...arrayOf(c.exposeHeaders)],
    allowCredentials: c.allowCredentials === true,
    maxAgeSeconds: c.maxAge ?? 5,
    ...(style ? { style } : {}),
  };
}

/**
 * The first name or value of a header modifier that cannot be sent (`set[0].name "example:1" is …`), or
 * undefined. Names must be RFC 9110 tokens, values field values (`fieldValueProblem`): Bun's Headers
 * throws on anything else, which would reset the connection of every request the rule serves.
 */
export function headerEditsProblem(
  config: NonNullable<HTTPRouteFilter["requestHeaderModifier"]>,
): string | undefined {
  const nameProblem = (name: string) =>
    name === ""
      ? "must not be empty"
      : `${shown(name)} is not a valid header name (an RFC 9110 token: letters, digits and !#$%&'*+-.^_\`|~)`;
  for (const list of ["set", "add"] as const) {
    for (const [k, h] of arrayOf(config[list]).entries()) {
      if (!isToken(h.name)) return `${list}[${k}].name ${nameProblem(h.name)}`;
      const problem = fieldValueProblem(h.value);
      if (problem) return `${list}[${k}].value ${shown(h.value)} ${problem}`;
    }
  }
  for (const [k, name] of arrayOf(config.remove).entries())
    if (!isToken(name)) return `remove[${k}] ${nameProblem(name)}`;
  return undefined;
}

/** Lower-case names; for a name given twice in one list only the first counts (the spec's rule). */
export function headerEdits(config: NonNullable<HTTPRouteFilter["requestHeaderModifier"]>): HeaderEdits {
  const firstByName = (list: readonly { name: string; value: string }[] | undefined) => {
    const seen = new Set<string>();
    const out: { name: string; value: string }[] = [];
    for (const h of arrayOf(list)) {
      const name = h.name.toLowerCase();
      if (seen.has(name)) continue;
      seen.add(name);
      out.push({ name, value: h.value });
    }
    return out;
  };
  return {
    set: firstByName(config.set),
    add: firstByName(config.add),
    remove: [...new Set(arrayOf(config.remove).map((n) => n.toLowerCase()))],
  };
}

/**
 * The first CORS value that cannot be sent in a response header, or undefined. Methods and header names
 * must be tokens (or `*`), origins field values: they are written into Access-Control-* headers, and
 * Bun's Headers throws on anything else (the standard-channel CRD checks their patterns; a folder-mode
 * manifest is not checked by it).
 */
function corsProblem(c: NonNullable<HTTPRouteFilter["cors"]>): string | undefined {
  for (const list of ["allowMethods", "allowHeaders", "exposeHeaders"] as const)
    for (const [k, v] of arrayOf(c[list]).entries())
      if (v !== "*" && !isToken(v)) return `${list}[${k}] ${shown(v)} is not an RFC 9110 token`;
  for (const [k, v] of arrayOf(c.allowOrigins).entries()) {
    const problem = v === "" ? "must not be empty" : fieldValueProblem(v);
    if (problem) return `allowOrigins[${k}] ${shown(v)} ${problem}`;
  }
  return undefined;
}

/** A name or value in a message: quoted, every control character escaped (JSON leaves DEL as it is). */
export function shown(s: string): string {
  return JSON.stringify(s).replaceAll("\u007f", "\\u007f");
}

/** `host:port` without the port (1–65535); anything else as it is, for preciseHostname to refuse. */
function withoutPort(host: string): string {
  const m = /^(.*):([0-9]{1,5})$/.exec(host);
  return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535 ? (m[1] as string) : host;
}

function preciseHostname(host: string): boolean {
  const parsed = parseGatewayHostname(host);
  return parsed.ok && parsed.host.match === "Exact";
}

/** `$1`…`$9` only: a `$` followed by anything else would be sent as written, which is never meant. */
const SUBSTITUTION = /^(?:[^$]|\$[1-9])*$/;

function pathModifier(p: PathModifierInput, at: PathContext): PathModifier | string {
  if (p.type === "ReplaceFullPath") {
    if (p.replaceFullPath === undefined) return "replaceFullPath is required for type ReplaceFullPath";
    return { type: "ReplaceFullPath", value: p.replaceFullPath };
  }
  if (p.type === "ReplacePrefixMatch") {
    if (p.replacePrefixMatch === undefined)
      return "replacePrefixMatch is required for type ReplacePrefixMatch";
    if (!at.prefixMatch) return "ReplacePrefixMatch needs the rule to have exactly one PathPrefix match";
    return { type: "ReplacePrefixMatch", value: p.replacePrefixMatch };
  }
  if (p.type === "ReplaceRegexMatch" && at.extended) {
    const r = p.replaceRegexMatch;
    if (r === undefined) return "replaceRegexMatch is required for type ReplaceRegexMatch";
    const compiled = compileRegex(r.pattern);
    if (compiled.error !== undefined)
      return `replaceRegexMatch.pattern ${shown(r.pattern)} ${compiled.error}`;
    if (!SUBSTITUTION.test(r.substitution))
      return `replaceRegexMatch.substitution ${shown(r.substitution)} may hold "$" only as $1 to $9`;
    const groups = compiled.regex.groupCount;
    const missing = [...r.substitution.matchAll(/\$([1-9])/g)].find((m) => Number(m[1]) > groups);
    if (missing)
      return `replaceRegexMatch.substitution names $${missing[1]}, but the pattern has ${groups} group${groups === 1 ? "" : "s"}`;
    const flagged = r.pattern.startsWith(LEADING_IGNORE_CASE);
    return {
      type: "RegexSubstitute",
      value: r.substitution,
      pattern: flagged ? r.pattern.slice(LEADING_IGNORE_CASE.length) : r.pattern,
      ...(flagged ? { ignoreCase: true } : {}),
    };
  }
  return `type "${p.type}" is not ${at.extended ? "ReplaceFullPath, ReplacePrefixMatch or ReplaceRegexMatch" : "ReplaceFullPath or ReplacePrefixMatch"}`;
}
