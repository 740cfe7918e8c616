/**
 * Picks the first route of a virtual host whose conditions all hold. Routes are in precedence order;
 * the exact-path index (when built) only narrows the candidates, merging by position so precedence is
 * the same as a linear scan.
 */
import {
  type CompiledRoute,
  type CompiledVirtualHost,
  PATH_EXACT,
  PATH_PREFIX,
  PATH_REGEX,
} from "../table.ts";
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
  if (vh.exactIndex === undefined) {
    for (const r of vh.routes) if (routeMatches(r, path, method, headers, query)) return r;
    return undefined;
  }
  const exact = vh.exactIndex.get(path);
  const others = vh.others;
  let i = 0;
  let j = 0;
  const ne = exact === undefined ? 0 : exact.length;
  while (i < ne || j < others.length) {
    const a = i < ne ? (exact as readonly CompiledRoute[])[i] : undefined;
    const b = j < others.length ? others[j] : undefined;
    let r: CompiledRoute;
    if (a !== undefined && (b === undefined || a.index < b.index)) {
      r = a;
      i++;
    } else {
      r = b as CompiledRoute;
      j++;
    }
    if (routeMatches(r, path, method, headers, query)) return r;
  }
  return undefined;
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
      return (r.pathRegex as RegExp).test(path);
    default:
      return false;
  }
}

/** Element-wise: prefix `/foo` (already without trailing slash; "" for `/`) matches `/foo`, `/foo/…`. */
export function prefixMatches(prefix: string, path: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47);
}
