import type { Problem, SourceRef } from "../../model/index.ts";
import type { HostPattern } from "../common/host-patterns.ts";
import { problem } from "../common/problems.ts";
import { compareSourceAge, type RouteOrder } from "../common/sort.ts";

/** A route before conflict resolution, with what is needed to explain a conflict. */
export interface ConflictCandidate extends RouteOrder {
  readonly host: HostPattern;
  readonly ref: SourceRef;
  /** Field path of the route's origin in its object, e.g. `spec.rules[0].http.paths[1]`. */
  readonly field: string;
  /** What the route is, for messages: `Prefix path "/foo"` or `default backend`. */
  readonly label: string;
}

/** Routes that claim the same thing: same host, same kind (rule or default backend), same path match. */
function conflictKey(c: ConflictCandidate): string {
  // NUL cannot occur in a host or path; a string join is much cheaper than JSON at 10k routes.
  return `${c.host.hostname}\0${c.isDefault}\0${c.path.type}\0${c.path.value}`;
}

/** Oldest object first, then namespace/name, then position within the object. */
function compareClaim(a: ConflictCandidate, b: ConflictCandidate): number {
  return compareSourceAge(a.source, b.source) || a.ruleIndex - b.ruleIndex || a.pathIndex - b.pathIndex;
}

/**
 * Keep one route per (host, path type, path) — and one default backend per host. The oldest object wins
 * (ties: namespace/name alphabetical, then the earlier rule/path in the same object); every other claim
 * is dropped with a warning on its own object naming the winner. Input order is kept for the survivors.
 */
export function dropConflicts<T extends ConflictCandidate>(
  candidates: readonly T[],
): { kept: T[]; problems: Problem[] } {
  const groups = new Map<string, T[]>();
  for (const c of candidates) {
    const key = conflictKey(c);
    const group = groups.get(key);
    if (group) group.push(c);
    else groups.set(key, [c]);
  }
  const losers = new Set<T>();
  const problems: Problem[] = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const [winner, ...others] = [...group].sort(compareClaim);
    if (!winner) continue;
    for (const loser of others) {
      losers.add(loser);
      problems.push(conflictProblem(loser, winner));
    }
  }
  return { kept: candidates.filter((c) => !losers.has(c)), problems };
}

function conflictProblem(loser: ConflictCandidate, winner: ConflictCandidate): Problem {
  const sameObject =
    loser.ref.kind === winner.ref.kind &&
    loser.ref.namespace === winner.ref.namespace &&
    loser.ref.name === winner.ref.name;
  const won = winner.source.createdMs;
  const lost = loser.source.createdMs;
  const why = sameObject
    ? "which comes first in the same object"
    : won !== undefined && lost === undefined
      ? "which has a creationTimestamp (objects without one come last)"
      : won !== undefined && won !== lost
        ? "which is older"
        : "which sorts first by namespace/name";
  const by = sameObject
    ? winner.field
    : `${winner.field} of ${winner.ref.kind} ${winner.ref.namespace}/${winner.ref.name}`;
  return problem(
    loser.ref,
    "Conflict",
    `${loser.field}: ${loser.label} on host "${loser.host.hostname}" is also defined by ${by}, ${why}; this one is ignored`,
    "warning",
  );
}
