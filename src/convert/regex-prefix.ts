/**
 * ingress-nginx's best-known rewrite, `path: /something(/|$)(.*)` with `rewrite-target: /$2` (its docs'
 * example), is a prefix strip: the route's pattern (prefix-anchored by translation as
 * `(?:/something(/|$)(.*))[\s\S]*`) matches exactly what PathPrefix `/something` matches, and the
 * substitution gives what ReplacePrefixMatch `/` gives. Such a route is written in that Gateway API form;
 * only nginx's case-insensitive matching is lost, and said.
 */
import type { Filter, Route } from "../model/index.ts";

const STRIP_PATTERN = /^\(\?:(\/[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*)\(\/\|\$\)\(\.\*\)\)\[\\s\\S\]\*$/;

/** The route with its path as PathPrefix and its rewrite as ReplacePrefixMatch `/`, or undefined. */
export function prefixStripForm(route: Route, lost: string[]): Route | undefined {
  const path = route.match.path;
  if (path.type !== "RegularExpression") return undefined;
  const prefix = STRIP_PATTERN.exec(path.value)?.[1];
  if (prefix === undefined) return undefined;
  const rewrites = route.filters.filter((f) => f.kind === "URLRewrite" && f.path?.type === "RegexSubstitute");
  const rewrite = rewrites[0];
  if (rewrites.length !== 1 || rewrite?.kind !== "URLRewrite" || rewrite.path?.pattern !== path.value)
    return undefined;
  if (rewrite.path.value !== "/$2" || rewrite.path.ignoreCase !== path.ignoreCase) return undefined;
  if (path.ignoreCase)
    lost.push(
      `matching ${prefix} regardless of case (nginx's ~*; written as PathPrefix ${prefix}, which is case-sensitive)`,
    );
  const filters = route.filters.map(
    (f): Filter => (f === rewrite ? { ...f, path: { type: "ReplacePrefixMatch", value: "/" } } : f),
  );
  return { ...route, match: { ...route.match, path: { type: "Prefix", value: prefix } }, filters };
}
