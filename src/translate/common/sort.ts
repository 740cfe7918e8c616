import type { PathMatch } from "../../model/index.ts";

/** What decides between two objects: age first, then namespace/name. */
export interface SourceOrder {
  readonly namespace: string;
  readonly name: string;
  /** creationTimestamp in ms; undefined when absent (folder mode). */
  readonly createdMs: number | undefined;
}

/** What decides a route's place within its virtual host. */
export interface RouteOrder {
  readonly path: PathMatch;
  /** Default-backend routes come after every rule route. */
  readonly isDefault: boolean;
  readonly source: SourceOrder;
  /** Position in the source object; -1 for default backends. */
  readonly ruleIndex: number;
  readonly pathIndex: number;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether two lists hold the same strings, each as often, in any order (lists that stand for sets). */
export function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  const sortedB = [...b].sort(compareStrings);
  return [...a].sort(compareStrings).every((x, i) => x === sortedB[i]);
}

/**
 * Oldest first (creationTimestamp); objects without a timestamp after those with one; then
 * namespace/name alphabetically. This is the "oldest wins" rule of Ingress conflicts.
 */
export function compareSourceAge(a: SourceOrder, b: SourceOrder): number {
  if (a.createdMs !== undefined && b.createdMs !== undefined && a.createdMs !== b.createdMs) {
    return a.createdMs - b.createdMs;
  }
  if (a.createdMs !== undefined && b.createdMs === undefined) return -1;
  if (a.createdMs === undefined && b.createdMs !== undefined) return 1;
  return compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name);
}

const typeRank: Record<PathMatch["type"], number> = { Exact: 0, Prefix: 1, RegularExpression: 2 };

/**
 * Route precedence within one virtual host; the first route whose match succeeds serves the request.
 * 1. Rule routes before default-backend routes (the default backend is the lowest priority `/`).
 * 2. Exact before Prefix. An Exact path can only be shadowed by a Prefix of equal or shorter length,
 *    so putting every Exact first is the same as "Exact before Prefix for the same path".
 * 3. Longer path (more characters) first: the longest matching prefix wins.
 * 4. Older source first, then namespace/name (see compareSourceAge).
 * 5. Rule index, then path index, within the source.
 * 6. Path value, so the order is total and output is stable whatever the input order.
 */
export function compareRoutePrecedence(a: RouteOrder, b: RouteOrder): number {
  return (
    Number(a.isDefault) - Number(b.isDefault) ||
    typeRank[a.path.type] - typeRank[b.path.type] ||
    b.path.value.length - a.path.value.length ||
    compareSourceAge(a.source, b.source) ||
    a.ruleIndex - b.ruleIndex ||
    a.pathIndex - b.pathIndex ||
    compareStrings(a.path.value, b.path.value)
  );
}
