import type { Backend, Filter, RedirectAction } from "../../../model/index.ts";
import type { HTTPRouteFilter } from "../../../sources/schema/gateway.ts";
import { RouteReason } from "../../../status/reasons.ts";
import { arrayOf } from "../../common/objects.ts";
import { type BackendContext, type RefIssue, resolveBackendRef } from "./backend-refs.ts";
import { extensionFilter } from "./extension-filter.ts";
import {
  corsFilter,
  headerEdits,
  headerEditsProblem,
  type RuleInvalid,
  redirectAction,
  urlRewrite,
} from "./filter-values.ts";

export type { RuleInvalid } from "./filter-values.ts";

export interface ConvertedFilters {
  /** Model filters in the order given (a RequestRedirect is not one: it becomes the route's action). */
  readonly filters: Filter[];
  readonly redirect?: RedirectAction;
  /** Mirrors dropped because their backend is invalid, and ExtensionRefs that do not resolve. */
  readonly issues: RefIssue[];
  /**
   * An ExtensionRef did not resolve: what the list applies to must answer 500, never be served without
   * the filter (Gateway API: a custom filter that cannot be resolved is never skipped).
   */
  readonly unresolved?: true;
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
  "ResponseRewrite",
]);
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
  const out = { filters: [] as Filter[], issues: [] as RefIssue[], backends: [] as Backend[] };
  let redirect: RedirectAction | undefined;
  let unresolved = false;
  const seen = new Set<string>();
  const bad = (i: number, message: string): RuleInvalid => ({
    reason: RouteReason.UnsupportedValue,
    message: `${field}[${i}]: ${message}`,
  });
  for (const [i, f] of arrayOf(list).entries()) {
    if (once.has(f.type) && seen.has(f.type)) return bad(i, `filter type ${f.type} may appear only once`);
    seen.add(f.type);
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
        if (!f.requestRedirect) return bad(i, "type RequestRedirect needs requestRedirect");
        const r = redirectAction(f.requestRedirect, opts);
        if (typeof r === "string") return bad(i, `requestRedirect.${r}`);
        redirect = r;
        break;
      }
      case "URLRewrite": {
        if (!f.urlRewrite) return bad(i, "type URLRewrite needs urlRewrite");
        const r = urlRewrite(f.urlRewrite, opts);
        if (typeof r === "string") return bad(i, `urlRewrite.${r}`);
        out.filters.push(r);
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
        if (!f.cors) return bad(i, "type CORS needs cors");
        const c = corsFilter(f.cors);
        if (typeof c === "string") return bad(i, `cors.${c}`);
        out.filters.push(c);
        break;
      }
      case "ExtensionRef": {
        const ext = extensionFilter(f.extensionRef, `${field}[${i}].extensionRef`, ctx, opts);
        if ("reason" in ext) return ext;
        if ("issue" in ext) {
          out.issues.push(ext.issue);
          unresolved = true;
          break;
        }
        const type = ext.redirect ? "RequestRedirect" : ext.filter.kind;
        if (once.has(type) && seen.has(type)) return bad(i, `a second ${type} (through ${ext.name})`);
        seen.add(type);
        if (ext.redirect) {
          if (!opts.allowRedirect) return bad(i, `${ext.name}: a redirect is not supported on a backendRef`);
          redirect = ext.redirect;
        } else out.filters.push(ext.filter);
        break;
      }
      default:
        return bad(i, `filter type "${f.type}" is not supported`);
    }
    if (seen.has("RequestRedirect") && seen.has("URLRewrite")) {
      return {
        reason: RouteReason.IncompatibleFilters,
        message: `${field}: RequestRedirect and URLRewrite cannot be combined`,
      };
    }
  }
  return { ...out, ...(redirect ? { redirect } : {}), ...(unresolved ? { unresolved: true } : {}) };
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
