/**
 * ingress-nginx's `use-regex` and `rewrite-target` (its template.go buildLocation, buildProxyPass and
 * enforceRegexModifier; docs/user-guide/ingress-path-matching.md):
 * - when any Ingress of a host sets `use-regex: "true"` or a `rewrite-target`, EVERY rule path of that
 *   host, whatever its Ingress and pathType, becomes `location ~* "^<path as written>"`: a
 *   case-insensitive regular expression anchored at the start only, so `/foo` also takes `/foobar`.
 *   Here: a RegularExpression match `(?:<path>)[\s\S]*`, ignoreCase, on the linear-time engine (a
 *   pattern it refuses drops that path with an error: no backtracking engine ever runs one);
 * - nginx tries regex locations in order, first match wins, and ingress-nginx orders them by path length,
 *   longest first (ties: the greater string first): the host's rule routes are put in that order, the
 *   routes around them (app-root's redirect first, the default backend last) staying where they are;
 * - `rewrite-target: T` (T unlike the path) sends `T` upstream with `$1`…`$9` from the path's groups, as
 *   `rewrite "(?i)<path>" T break;` does; the query is kept. ingress-nginx accepts only
 *   `/?[A-Za-z0-9-._~/:$]*` as T (else it ignores it): so here, with an error.
 * Canary routes share their main route's path and Ingress: they move and are rewritten with it.
 */
import type { Filter, Problem, Route, SourceRef, VirtualHost } from "../../../model/index.ts";
import { compileRegex } from "../../../proxy/match/regex/regex.ts";
import type { Ingress } from "../../../sources/schema/networking.ts";
import { isCanaryRouteName, isIngressPathRouteName, mainRouteName } from "../../common/names.ts";
import { annotationOf, sourceRef } from "../../common/objects.ts";
import { problem } from "../../common/problems.ts";
import { compareStrings } from "../../common/sort.ts";
import { NGINX_PREFIX } from "./nginx-annotations.ts";
import { goBool } from "./route-edits.ts";

/** ingress-nginx's RegexPathWithCapture: the rewrite targets it takes. */
const REWRITE_TARGET = /^\/?[A-Za-z0-9\-._~/:$]*$/;

interface RegexIngress {
  readonly ref: SourceRef;
  readonly useRegex: boolean;
  /** A valid rewrite target, when set. */
  readonly target?: string;
}

export interface RegexPaths {
  readonly virtualHosts: VirtualHost[];
  readonly problems: Problem[];
}

/** A `rewrite-target` value as ingress-nginx keeps it: trimmed; empty or refused by its validator: undefined. */
export function rewriteTargetOf(raw: string | undefined): string | undefined {
  const v = raw?.trim();
  return v === undefined || v === "" || !REWRITE_TARGET.test(v) ? undefined : v;
}

/** What one Ingress asks for; a refused target is reported. */
function readIngress(ingress: Ingress, problems: Problem[]): RegexIngress {
  const ref = sourceRef("Ingress", ingress);
  const useRegex = goBool(annotationOf(ingress, `${NGINX_PREFIX}use-regex`) ?? "") === true;
  const raw = annotationOf(ingress, `${NGINX_PREFIX}rewrite-target`);
  if (raw === undefined || raw.trim() === "") return { ref, useRegex };
  const target = rewriteTargetOf(raw);
  if (target === undefined) {
    const message = `annotation ${NGINX_PREFIX}rewrite-target ${JSON.stringify(raw)}: may hold only letters, digits, $ and - . _ ~ / : (as ingress-nginx checks it); not applied`;
    problems.push(problem(ref, "InvalidAnnotation", message));
    return { ref, useRegex };
  }
  return { ref, useRegex, target };
}

/**
 * The hosts with regex paths where ingress-nginx would have them. `written` maps a rule route's name to
 * its path as written (canary routes are found under their main route's name).
 */
export function applyRegexPaths(
  virtualHosts: readonly VirtualHost[],
  ingresses: readonly Ingress[],
  written: ReadonlyMap<string, string>,
): RegexPaths {
  const problems: Problem[] = [];
  const asked = new Map<string, RegexIngress>();
  for (const ing of ingresses) {
    const r = readIngress(ing, problems);
    if (r.useRegex || r.target !== undefined) asked.set(`${r.ref.namespace}/${r.ref.name}`, r);
  }
  if (asked.size === 0) return { virtualHosts: [...virtualHosts], problems };
  const out = virtualHosts.map((vh) => {
    const rules = vh.routes.filter((r) => r.source.kind === "Ingress" && isIngressPathRouteName(r.name));
    const enforced = rules.some((r) => {
      const a = asked.get(`${r.source.namespace}/${r.source.name}`);
      return a !== undefined && (a.useRegex || rewrites(a, pathOf(r, written)));
    });
    if (!enforced) return vh;
    const converted = new Map<Route, Route | undefined>();
    for (const r of rules) converted.set(r, regexRoute(r, pathOf(r, written), asked, problems));
    const kept = rules.filter((r) => converted.get(r) !== undefined);
    const sorted = [...kept].sort((a, b) => {
      const pa = pathOf(a, written);
      const pb = pathOf(b, written);
      return pb.length - pa.length || compareStrings(pb, pa);
    });
    // The rule routes take the sorted order in the slots they held; other routes stay where they were.
    let next = 0;
    const routes: Route[] = [];
    for (const r of vh.routes) {
      if (!converted.has(r)) routes.push(r);
      else if (converted.get(r) !== undefined) routes.push(converted.get(sorted[next++] as Route) as Route);
    }
    return { ...vh, routes };
  });
  return { virtualHosts: out, problems };
}

function pathOf(r: Route, written: ReadonlyMap<string, string>): string {
  return written.get(mainRouteName(r.name)) ?? r.match.path.value;
}

/** ingress-nginx rewrites only when the target differs from the location's path (needsRewrite). */
function rewrites(a: RegexIngress, path: string): boolean {
  return a.target !== undefined && a.target !== path;
}

function regexRoute(
  r: Route,
  path: string,
  asked: ReadonlyMap<string, RegexIngress>,
  problems: Problem[],
): Route | undefined {
  const pattern = `(?:${path})[\\s\\S]*`;
  const compiled = compileRegex(pattern, { ignoreCase: true });
  if (compiled.error !== undefined) {
    // Reported once, on the main route (its canary copies share the path).
    if (!isCanaryRouteName(r.name)) {
      const message = `path ${JSON.stringify(path)} of route ${r.name}: on this host every path is a regular expression (use-regex or rewrite-target), and this one ${compiled.error}; the path is not served`;
      problems.push(problem(r.source, "InvalidPath", message));
    }
    return undefined;
  }
  const a = asked.get(`${r.source.namespace}/${r.source.name}`);
  const rewrite: Filter[] =
    a !== undefined && rewrites(a, path)
      ? [
          {
            kind: "URLRewrite",
            path: { type: "RegexSubstitute", value: a.target as string, pattern, ignoreCase: true },
          },
        ]
      : [];
  return {
    ...r,
    match: { ...r.match, path: { type: "RegularExpression", value: pattern, ignoreCase: true } },
    filters: [...rewrite, ...r.filters],
  };
}
