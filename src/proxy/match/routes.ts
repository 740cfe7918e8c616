/**
 * Picks the first route of a virtual host whose conditions all hold. Routes are in precedence order;
 * the path index (path-index.ts, built for larger hosts) only narrows the candidates, and the lowest
 * `index` among the matching candidates wins, so precedence is the same as a linear scan.
 */

import type { Candidates, PathIndex } from "../table.ts";
import {
  type CompiledRoute,
  type CompiledVirtualHost,
  PATH_EXACT,
  PATH_PREFIX,
  PATH_REGEX,
} from "../table.ts";
import type { ValueRegex } from "./regex/regex.ts";
import { firstQueryValue, valueMatches } from "./values.ts";

/** What header conditions read: a `Headers`, or the raw-socket front's view of its parsed head. */
export interface HeaderLookup {
  get(name: string): string | null;
}

export function findRoute(
  vh: CompiledVirtualHost,
  path: string,
  method: string,
  headers: HeaderLookup,
  query: string,
): CompiledRoute | undefined {
  const ix = vh.pathIndex;
  if (ix === undefined || path.charCodeAt(0) !== 47) {
    for (const r of vh.routes) if (routeMatches(r, path, method, headers, query)) return r;
    return undefined;
  }
  return findIndexed(ix, path, method, headers, query);
}

function findIndexed(
  ix: PathIndex,
  path: string,
  method: string,
  headers: HeaderLookup,
  query: string,
): CompiledRoute | undefined {
  let best: CompiledRoute | undefined;
  const whole = ix.byPath.get(path);
  if (whole !== undefined) {
    best = firstMatch(whole.exact, best, path, method, headers, query);
    best = firstMatch(whole.prefix, best, path, method, headers, query);
  }
  best = firstMatch(ix.root, best, path, method, headers, query);
  // The parts of the path before each `/`: `/a`, `/a/b` for `/a/b/c`; a prefix there matches.
  let depth = 1;
  for (let end = path.indexOf("/", 1); end > 0 && depth <= ix.maxDepth; end = path.indexOf("/", end + 1)) {
    const e = ix.byPath.get(path.slice(0, end));
    if (e !== undefined) best = firstMatch(e.prefix, best, path, method, headers, query);
    depth++;
  }
  // Last: regular expressions rank after paths in Gateway API precedence, so a hit above usually skips them.
  return firstMatch(ix.always, best, path, method, headers, query);
}

/** The first candidate (in precedence order) that matches and comes before `best`; else `best`. */
function firstMatch(
  c: Candidates | undefined,
  best: CompiledRoute | undefined,
  path: string,
  method: string,
  headers: HeaderLookup,
  query: string,
): CompiledRoute | undefined {
  if (c === undefined) return best;
  const limit = best === undefined ? Number.POSITIVE_INFINITY : best.index;
  const routes = c.routes;
  for (let i = 0; i < routes.length; i++) {
    const r = routes[i] as CompiledRoute;
    if (r.index >= limit) break;
    // Path-only candidates were reached through the index by their path: they match as they are.
    if ((i < 31 && (c.mask & (1 << i)) !== 0) || routeMatches(r, path, method, headers, query)) return r;
  }
  return best;
}

export function routeMatches(
  r: CompiledRoute,
  path: string,
  method: string,
  headers: HeaderLookup,
  query: string,
): boolean {
  if (!pathMatches(r, path)) return false;
  if (r.method !== undefined && r.method !== method) return false;
  for (const h of r.headers) if (!valueMatches(h, headers.get(h.name))) return false;
  for (const q of r.query) if (!valueMatches(q, firstQueryValue(query, q.name))) return false;
  return true;
}

export function pathMatches(r: CompiledRoute, path: string): boolean {
  switch (r.pathType) {
    case PATH_EXACT:
      return path === r.pathValue;
    case PATH_PREFIX:
      return prefixMatches(r.pathValue, path);
    case PATH_REGEX:
      return (r.pathRegex as ValueRegex).test(path);
    default:
      return false;
  }
}

/** Element-wise: prefix `/foo` (already without trailing slash; "" for `/`) matches `/foo`, `/foo/…`. */
export function prefixMatches(prefix: string, path: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47);
}
