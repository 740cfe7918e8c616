/**
 * A per-virtual-host index that narrows the routes a path can match, so a host with thousands of routes
 * costs a few map lookups instead of a scan. It only ever narrows: every route that could match a path
 * is among the candidates; a candidate whose path alone decides matches by having been found, the others
 * are checked in full (`routeMatches`); the lowest `index` wins, exactly as the linear scan would pick.
 *
 * - One map by path string. Exact routes sit at their path. Prefix matching is element-wise, so a prefix
 *   `/a/b` matches exactly the paths `/a/b` and `/a/b/…`: it is found at the whole path or at the part of
 *   the path before one of its `/` (only as many `/` deep as the deepest prefix of the host).
 * - The prefix `/` (stored as "") matches every path: its routes are always candidates.
 * - Everything else (regular expressions, a value not starting with `/`) is tried for every path.
 * Paths that do not start with `/` (`*`, absolute-form leftovers) take the linear scan.
 * The layout keeps the objects a lookup touches few (entry → array → route), since at 10k+ routes the
 * cost of a lookup is mostly memory latency (bench/matcher.ts).
 */
import {
  type Candidates,
  type CompiledRoute,
  PATH_EXACT,
  PATH_NEVER,
  PATH_PREFIX,
  type PathEntry,
  type PathIndex,
} from "../table.ts";

/**
 * Hosts with fewer routes are scanned: one array walked in order beats a few hash lookups there, more so
 * when the table is large and lookups miss the CPU cache (bench/matcher.ts: 10-route hosts at 10k routes,
 * scanned 0.8 µs a lookup, indexed 1.2 µs).
 */
export const PATH_INDEX_MIN = 16;

function add(c: Candidates | undefined, r: CompiledRoute, pathDecides: boolean): Candidates {
  const out = c ?? { routes: [], mask: 0 };
  const i = out.routes.push(r) - 1;
  const only = pathDecides && r.method === undefined && r.headers.length === 0 && r.query.length === 0;
  if (only && i < 31) out.mask |= 1 << i;
  return out;
}

/** The index of `routes` (in precedence order), or undefined when a scan is as good. */
export function buildPathIndex(routes: readonly CompiledRoute[]): PathIndex | undefined {
  if (routes.length < PATH_INDEX_MIN) return undefined;
  const byPath = new Map<string, PathEntry>();
  let root: Candidates | undefined;
  let always: Candidates | undefined;
  let maxDepth = 0;
  const entry = (path: string) => {
    let e = byPath.get(path);
    if (e === undefined) {
      e = { exact: undefined, prefix: undefined };
      byPath.set(path, e);
    }
    return e;
  };
  for (const r of routes) {
    if (r.pathType === PATH_NEVER) continue;
    if (r.pathType === PATH_EXACT) {
      const e = entry(r.pathValue);
      e.exact = add(e.exact, r, true);
    } else if (r.pathType === PATH_PREFIX && r.pathValue === "") root = add(root, r, true);
    else if (r.pathType === PATH_PREFIX && r.pathValue.charCodeAt(0) === 47) {
      const e = entry(r.pathValue);
      e.prefix = add(e.prefix, r, true);
      maxDepth = Math.max(maxDepth, r.pathValue.split("/").length - 1);
    } else always = add(always, r, false);
  }
  return { byPath, root, maxDepth, always };
}
