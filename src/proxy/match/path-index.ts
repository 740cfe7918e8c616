/**
 * A per-virtual-host index that narrows the routes a path can match, so a host with thousands of routes
 * costs a few map lookups instead of a scan. It only ever narrows: every route that could match a path
 * is among the candidates, and the candidates are still checked in full (`routeMatches`), the first in
 * precedence order (lowest `index`) winning, exactly as the linear scan would pick.
 *
 * - Exact paths: by the whole path.
 * - Prefixes: a tree of path segments. Matching is element-wise, so a prefix `/a/b` can only match a
 *   path whose first two segments are `a` and `b`, and walking the path's segments down the tree visits
 *   every prefix that can match it (and only those). `/` (stored as "") sits at the root.
 * - Everything else (regular expressions, a value not starting with `/`) is tried for every path.
 * Paths that do not start with `/` (`*`, absolute-form leftovers) take the linear scan.
 */
import { type CompiledRoute, PATH_EXACT, PATH_NEVER, PATH_PREFIX } from "../table.ts";

/**
 * Routes in precedence order, each with whether its path alone decides: no method, header or query
 * condition. Reaching such a route through the index is a match, with no check at all (the lookup then
 * reads nothing of the route but its `index`, which keeps large tables out of the CPU cache's way).
 */
export interface Candidates {
  readonly routes: CompiledRoute[];
  readonly pathOnly: boolean[];
}

export interface PrefixNode extends Candidates {
  readonly children: Map<string, PrefixNode>;
}

export interface PathIndex {
  readonly exact: ReadonlyMap<string, Candidates>;
  readonly root: PrefixNode;
  /** Never path-only: their path must still be checked. */
  readonly always: Candidates;
}

/** Hosts with fewer routes are scanned: below this a scan is as fast as the index (bench/matcher.ts). */
export const PATH_INDEX_MIN = 8;

/** The index of `routes` (in precedence order), or undefined when a scan is as good. */
export function buildPathIndex(routes: readonly CompiledRoute[]): PathIndex | undefined {
  if (routes.length < PATH_INDEX_MIN) return undefined;
  const exact = new Map<string, Candidates>();
  const root: PrefixNode = { routes: [], pathOnly: [], children: new Map() };
  const always: Candidates = { routes: [], pathOnly: [] };
  const add = (c: Candidates, r: CompiledRoute, pathDecides: boolean) => {
    c.routes.push(r);
    c.pathOnly.push(pathDecides && r.method === undefined && r.headers.length === 0 && r.query.length === 0);
  };
  for (const r of routes) {
    if (r.pathType === PATH_NEVER) continue;
    if (r.pathType === PATH_EXACT) {
      let c = exact.get(r.pathValue);
      if (c === undefined) {
        c = { routes: [], pathOnly: [] };
        exact.set(r.pathValue, c);
      }
      add(c, r, true);
    } else if (r.pathType === PATH_PREFIX && (r.pathValue === "" || r.pathValue.charCodeAt(0) === 47)) {
      let node = root;
      if (r.pathValue !== "")
        for (const seg of r.pathValue.slice(1).split("/")) {
          let child = node.children.get(seg);
          if (child === undefined) {
            child = { routes: [], pathOnly: [], children: new Map() };
            node.children.set(seg, child);
          }
          node = child;
        }
      add(node, r, true);
    } else add(always, r, false);
  }
  return { exact, root, always };
}
