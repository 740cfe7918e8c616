import type { Backend, SourceRef } from "../../../model/index.ts";
import type { HTTPRoute, ReferenceGrant } from "../../../sources/schema/gateway.ts";
import { RouteReason } from "../../../status/reasons.ts";
import type { HostPattern } from "../../common/host-patterns.ts";
import { httpRouteName } from "../../common/names.ts";
import { arrayOf, creationMillis, sourceRef } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import type { SourceOrder } from "../../common/sort.ts";
import type { RefIssue } from "./backend-refs.ts";
import type { RuleInvalid } from "./filters.ts";
import { checkRouteWide } from "./route-wide.ts";
import { type RuleEntry, translateRule } from "./rule.ts";
import { ruleSession, withSession } from "./session-persistence.ts";

/** One HTTPRoute on its own, before it meets Gateways: what it serves and what is wrong with it. */
export interface HTTPRouteTranslation {
  readonly route: HTTPRoute;
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  /** Its hostnames; empty means any host. */
  readonly hostnames: readonly HostPattern[];
  /** Route entries of the valid rules, in rule/match order. */
  readonly entries: readonly RuleEntry[];
  /** Backends the entries and mirrors point at (valid references only). */
  readonly backends: readonly Backend[];
  /** Set when the route cannot be accepted at all (Accepted False with this reason). */
  readonly invalid?: RuleInvalid;
  /** Rules dropped while others are served (PartiallyInvalid True, message "Dropped Rule…"). */
  readonly dropped: readonly RuleInvalid[];
  /** Unresolvable references (ResolvedRefs False; the first one gives the reason). */
  readonly refIssues: readonly RefIssue[];
}

/**
 * Translate one HTTPRoute independently of its parents. Route-wide problems (too many hostnames,
 * parentRefs, rules or matches; an invalid hostname) make the route invalid. Rule problems drop that
 * rule only ("Drop Rule(s)", as GEP-1364's PartiallyInvalid describes); when every rule is dropped the
 * route is invalid with the first rule's reason.
 */
export function translateHTTPRoute(
  route: HTTPRoute,
  index: SnapshotIndex,
  grants: readonly ReferenceGrant[],
): HTTPRouteTranslation {
  const ref = sourceRef("HTTPRoute", route);
  const order: SourceOrder = { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(route) };
  const base = {
    route,
    ref,
    order,
    hostnames: [] as HostPattern[],
    entries: [],
    backends: [],
    dropped: [],
    refIssues: [],
  };
  const invalid = (message: string): HTTPRouteTranslation => ({
    ...base,
    invalid: { reason: RouteReason.UnsupportedValue, message },
  });
  const spec = route.spec ?? {};
  const rules = arrayOf(spec.rules);
  const wide = checkRouteWide(spec);
  if (!wide.ok) return invalid(wide.message);
  const hostnames = wide.hostnames;
  const ctx = { index, grants, namespace: ref.namespace, source: ref };
  const entries: RuleEntry[] = [];
  const backends: Backend[] = [];
  const backendIds = new Set<string>();
  const dropped: RuleInvalid[] = [];
  const refIssues: RefIssue[] = [];
  const effectiveRules = rules.length > 0 ? rules : [{}];
  const routeName = httpRouteName(ref.namespace, ref.name);
  for (const [i, rule] of effectiveRules.entries()) {
    const session = ruleSession(rule, i);
    if (session !== undefined && "reason" in session) {
      dropped.push(session);
      continue;
    }
    const t = translateRule(rule, i, routeName, ctx);
    if ("reason" in t) {
      dropped.push(t);
      continue;
    }
    entries.push(...(session === undefined ? t.entries : withSession(t.entries, session)));
    // One Backend per id: rules naming the same Service port resolve to equal Backends (the model keeps
    // the first of an id anyway), and each kept copy lives as long as the route's memo.
    for (const b of t.backends)
      if (!backendIds.has(b.id)) {
        backendIds.add(b.id);
        backends.push(b);
      }
    refIssues.push(...t.issues);
  }
  if (entries.length === 0 && dropped.length > 0) {
    const first = dropped[0] as RuleInvalid;
    const all = dropped.map((d) => d.message).join("; ");
    return {
      ...base,
      hostnames,
      invalid: { reason: first.reason, message: `every rule is invalid: ${all}` },
    };
  }
  return { ...base, hostnames, entries, backends, dropped, refIssues };
}
