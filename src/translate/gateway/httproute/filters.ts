import { fieldValueProblem, isToken } from "../../../model/http-syntax.ts";
import type { Backend, Filter, HeaderEdits, PathModifier, RedirectAction } from "../../../model/index.ts";
import type { HTTPRouteFilter } from "../../../sources/schema/gateway.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { arrayOf } from "../../common/objects.ts";
import { parseGatewayHostname } from "../gateway-hostnames.ts";
import { type BackendContext, type RefIssue, resolveBackendRef } from "./backend-refs.ts";

/** Why a rule cannot be served: its Accepted reason and a message naming the field. */
export interface RuleInvalid {
  readonly reason: typeof RouteReason.UnsupportedValue | typeof RouteReason.IncompatibleFilters;
  readonly message: string;
}

export interface ConvertedFilters {
  /** Model filters in the order given (a RequestRedirect is not one: it becomes the route's action). */
  readonly filters: Filter[];
  readonly redirect?: RedirectAction;
  /** Mirrors dropped because their backend is invalid. */
  readonly issues: RefIssue[];
  /** Backends of valid mirrors. */
  readonly backends: Backend[];
}

/** Filter types that may appear only once in one list (CEL rules of the CRD). */
const once = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestRedirect",
  "URLRewrite",
  "CORS",
]);
const redirectCodes = new Set([301, 302, 303, 307, 308]);

/**
 * An HTTPRoute filter list as model filters. `prefixMatch` says whether the rule has exactly one
 * PathPrefix match, which ReplacePrefixMatch needs. `allowRedirect` is false for backendRef filters
 * (a redirect there is not supported). A broken filter makes the whole list (so the rule) invalid.
 */
export function convertFilters(
  list: readonly HTTPRouteFilter[] | undefined,
  field: string,
  ctx: BackendContext,
  opts: { readonly prefixMatch: boolean; readonly allowRedirect: boolean },
): ConvertedFilters | RuleInvalid {
  const out: ConvertedFilters = { filters: [], issues: [], backends: [] };
  let redirect: RedirectAction | undefined;
  const seen = new Set<string>();
  const bad = (i: number, message: string): RuleInvalid => ({
    reason: RouteReason.UnsupportedValue,
    message: `${field}[${i}]: ${message}`,
  });
  for (const [i, f] of arrayOf(list).entries()) {
    if (once.has(f.type) && seen.has(f.type)) return bad(i, `filter type ${f.type} may appear only once`);
    seen.add(f.type);
    if (seen.has("RequestRedirect") && seen.has("URLRewrite")) {
      return {
        reason: RouteReason.IncompatibleFilters,
        message: `${field}: RequestRedirect and URLRewrite cannot be combined`,
      };
    }
    switch (f.type) {
      case "RequestHeaderModifier":
      case "ResponseHeaderModifier": {
        const config =
          f.type === "RequestHeaderModifier" ? f.requestHeaderModifier : f.responseHeaderModifier;
        if (!config) return bad(i, `type ${f.type} needs its configuration field`);
        const key = f.type === "RequestHeaderModifier" ? "requestHeaderModifier" : "responseHeaderModifier";
        const problem = headerEditsProblem(config);
        if (problem) return bad(i, `${key}.${problem}`);
        out.filters.push({ kind: f.type, edits: headerEdits(config) });
        break;
      }
      case "RequestRedirect": {
        if (!opts.allowRedirect) return bad(i, "RequestRedirect is not supported on a backendRef");
        const r = f.requestRedirect;
        if (!r) return bad(i, "type RequestRedirect needs requestRedirect");
        const scheme = r.scheme;
        if (scheme !== undefined && scheme !== "http" && scheme !== "https")
          return bad(i, `scheme "${scheme}" is not http or https`);
        const statusCode = r.statusCode ?? 302;
        if (!redirectCodes.has(statusCode))
          return bad(i, `statusCode ${statusCode} is not one of 301, 302, 303, 307, 308`);
        if (r.port !== undefined && (r.port < 1 || r.port > 65535))
          return bad(i, `port ${r.port} is out of range`);
        if (r.hostname !== undefined && !preciseHostname(r.hostname))
          return bad(i, `hostname "${r.hostname}" is not a valid hostname`);
        const path = r.path ? pathModifier(r.path, opts.prefixMatch) : undefined;
        if (typeof path === "string") return bad(i, `path: ${path}`);
        redirect = {
          kind: "Redirect",
          statusCode,
          ...(scheme ? { scheme } : {}),
          ...(r.hostname ? { hostname: r.hostname } : {}),
          ...(r.port !== undefined ? { port: r.port } : {}),
          ...(path ? { path } : {}),
        };
        break;
      }
      case "URLRewrite": {
        const r = f.urlRewrite;
        if (!r) return bad(i, "type URLRewrite needs urlRewrite");
        if (r.hostname !== undefined && !preciseHostname(r.hostname))
          return bad(i, `hostname "${r.hostname}" is not a valid hostname`);
        const path = r.path ? pathModifier(r.path, opts.prefixMatch) : undefined;
        if (typeof path === "string") return bad(i, `path: ${path}`);
        out.filters.push({
          kind: "URLRewrite",
          ...(r.hostname ? { hostname: r.hostname } : {}),
          ...(path ? { path } : {}),
        });
        break;
      }
      case "RequestMirror": {
        const m = f.requestMirror;
        if (!m) return bad(i, "type RequestMirror needs requestMirror");
        const percent = mirrorPercent(m);
        if (typeof percent === "string") return bad(i, percent);
        const resolved = resolveBackendRef(m.backendRef, `${field}[${i}].requestMirror.backendRef`, ctx);
        if (resolved.issue || !resolved.backend) {
          if (resolved.issue) out.issues.push(resolved.issue);
          break; // an invalid mirror is dropped; the rule still serves
        }
        out.backends.push(resolved.backend);
        out.filters.push({ kind: "RequestMirror", backendId: resolved.backend.id, percent });
        break;
      }
      case "CORS": {
        const c = f.cors;
        if (!c) return bad(i, "type CORS needs cors");
        const problem = corsProblem(c);
        if (problem) return bad(i, `cors.${problem}`);
        out.filters.push({
          kind: "CORS",
          allowOrigins: [...arrayOf(c.allowOrigins)],
          allowMethods: [...arrayOf(c.allowMethods)],
          allowHeaders: [...arrayOf(c.allowHeaders)],
          exposeHeaders: [...arrayOf(c.exposeHeaders)],
          allowCredentials: c.allowCredentials === true,
          maxAgeSeconds: c.maxAge ?? 5,
        });
        break;
      }
      default:
        return bad(i, `filter type "${f.type}" is not supported`);
    }
  }
  return redirect ? { ...out, redirect } : out;
}

/**
 * The first name or value of a header modifier that cannot be sent (`set[0].name "example:1" is …`), or
 * undefined. Names must be RFC 9110 tokens, values field values (`fieldValueProblem`): Bun's Headers
 * throws on anything else, which would reset the connection of every request the rule serves.
 */
function headerEditsProblem(
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
function shown(s: string): string {
  return JSON.stringify(s).replaceAll("\u007f", "\\u007f");
}

/** Lower-case names; for a name given twice in one list only the first counts (the spec's rule). */
function headerEdits(config: NonNullable<HTTPRouteFilter["requestHeaderModifier"]>): HeaderEdits {
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

function preciseHostname(host: string): boolean {
  const parsed = parseGatewayHostname(host);
  return parsed.ok && parsed.host.match === "Exact";
}

function pathModifier(
  p: { type: string; replaceFullPath?: string; replacePrefixMatch?: string },
  prefixMatch: boolean,
): PathModifier | string {
  if (p.type === "ReplaceFullPath") {
    if (p.replaceFullPath === undefined) return "replaceFullPath is required for type ReplaceFullPath";
    return { type: "ReplaceFullPath", value: p.replaceFullPath };
  }
  if (p.type === "ReplacePrefixMatch") {
    if (p.replacePrefixMatch === undefined)
      return "replacePrefixMatch is required for type ReplacePrefixMatch";
    if (!prefixMatch) return "ReplacePrefixMatch needs the rule to have exactly one PathPrefix match";
    return { type: "ReplacePrefixMatch", value: p.replacePrefixMatch };
  }
  return `type "${p.type}" is not ReplaceFullPath or ReplacePrefixMatch`;
}

function mirrorPercent(m: NonNullable<HTTPRouteFilter["requestMirror"]>): number | string {
  if (m.percent !== undefined && m.fraction !== undefined)
    return "only one of percent and fraction may be set";
  if (m.percent !== undefined) {
    return m.percent >= 0 && m.percent <= 100 ? m.percent : `percent ${m.percent} is not within 0–100`;
  }
  if (m.fraction !== undefined) {
    const denominator = m.fraction.denominator ?? 100;
    const { numerator } = m.fraction;
    if (denominator <= 0 || numerator < 0 || numerator > denominator) {
      return `fraction ${numerator}/${denominator} must have 0 <= numerator <= denominator and denominator > 0`;
    }
    return (numerator * 100) / denominator;
  }
  return 100;
}
