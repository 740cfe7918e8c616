/**
 * RateLimitPolicies (and ingress-nginx `limit-*` annotations) onto the built model: each placed route
 * gets the `rateLimit` of the policy that wins GEP-713 attachment for it (policy-attachment.ts; most
 * specific target wins, the oldest of policies on one target), and each policy its ancestor status.
 * Everything that goes wrong fails closed: an invalid policy is reported (`Invalid`) and still attaches
 * exactly as a valid one would, its routes carrying a limit marked `invalid` (they answer 500, never open
 * nor under a looser policy); so do an Ingress's routes when one of its `limit-*` annotations cannot be
 * parsed. A RateLimitPolicy that applies to an Ingress's route takes precedence over its annotations.
 */
import type { GatewayModel, Problem, Route, RouteRateLimit, SourceRef } from "../../model/index.ts";
import { policyGroup } from "../../sources/schema/groups.ts";
import type { RateLimitPolicy } from "../../sources/schema/policies.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { ingressRateLimitName, rateLimitPolicyName } from "../common/names.ts";
import { arrayOf, creationMillis, sourceRef } from "../common/objects.ts";
import { builtEach } from "../common/problems.ts";
import { compareStrings } from "../common/sort.ts";
import { hasLimitAnnotation, ingressRateLimit } from "../ingress/annotations/request-rate.ts";
import {
  type AncestorResult,
  type AttachablePolicy,
  attachPolicies,
  mapPlacedRoutes,
  policyTargets,
} from "./policy-attachment.ts";
import { type PolicyStatusInput, policyProblems, policyStatus } from "./policy-status.ts";
import { parseRateLimitSpec, type RateLimitSettings } from "./ratelimit-spec.ts";

export interface RateLimitTranslation {
  readonly model: GatewayModel;
  /** One per RateLimitPolicy, by namespace/name. */
  readonly statuses: readonly ObjectStatus[];
  readonly problems: readonly Problem[];
}

interface Candidate extends AttachablePolicy {
  readonly generation: number | undefined;
  readonly settings: RateLimitSettings | string;
}

export function applyRateLimitPolicies(
  model: GatewayModel,
  snapshot: ResourceSnapshot,
  controllerName: string,
): RateLimitTranslation {
  const problems: Problem[] = [];
  const candidates = builtEach(snapshot?.rateLimitPolicies, "RateLimitPolicy", candidate, problems);
  // Annotations count only on Ingresses that are ours (they have routes in the model).
  const limited = arrayOf(snapshot?.ingresses).filter((ing) => ing?.metadata && hasLimitAnnotation(ing));
  const ours = new Set<string>();
  if (limited.length > 0)
    for (const l of model.listeners)
      for (const vh of l.virtualHosts)
        for (const r of vh.routes)
          if (r.source.kind === "Ingress") ours.add(`${r.source.namespace}/${r.source.name}`);
  /** By Ingress namespace/name: the annotations' settings, or why they cannot be enforced. */
  const annotated = new Map<string, RateLimitSettings | string>();
  for (const ing of limited) {
    const ref = sourceRef("Ingress", ing);
    if (!ours.has(`${ref.namespace}/${ref.name}`)) continue;
    const found = ingressRateLimit(ing, ref);
    problems.push(...found.problems);
    const own = found.invalid ?? found.settings;
    if (own !== undefined) annotated.set(`${ref.namespace}/${ref.name}`, own);
  }
  const targets = policyTargets(snapshot);
  // Invalid policies attach too (fail closed): they win where they would have won.
  const attached = attachPolicies(candidates, targets);
  // Nothing can attach (the common case): skip walking every route of a large model.
  const next =
    candidates.length === 0 && annotated.size === 0
      ? model
      : mapPlacedRoutes(model, (listener, route) => {
          const p = attached.policyFor(listener, route);
          if (p !== undefined)
            return withLimit(route, p.ref, rateLimitPolicyName(p.ref.namespace, p.ref.name), p.settings);
          if (route.source.kind !== "Ingress") return route;
          const own = annotated.get(`${route.source.namespace}/${route.source.name}`);
          return own === undefined
            ? route
            : withLimit(
                route,
                route.source,
                ingressRateLimitName(route.source.namespace, route.source.name),
                own,
              );
        });
  const statuses: ObjectStatus[] = [];
  const sorted = [...candidates].sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  );
  for (const c of sorted) {
    const key = `${c.ref.namespace}/${c.ref.name}`;
    // An invalid policy attaches like a valid one (its routes fail closed), but its status says what is
    // wrong with it on every target found, Conflicted or not: judged alone, as policyStatus marks Invalid.
    const ancestors: readonly AncestorResult[] =
      typeof c.settings === "string"
        ? (attachPolicies([c], targets).ancestors.get(key) ?? [])
        : (attached.ancestors.get(key) ?? []);
    const input: PolicyStatusInput = {
      group: policyGroup,
      ref: c.ref,
      generation: c.generation,
      controllerName,
      ancestors,
      ...(typeof c.settings === "string" ? { invalid: c.settings } : {}),
    };
    statuses.push(policyStatus(input));
    // The status says what is wrong; the problem also says what that does to the routes.
    problems.push(
      ...policyProblems(
        typeof c.settings === "string" ? { ...input, invalid: `${c.settings}; ${failsClosed}` } : input,
      ),
    );
  }
  return { model: next, statuses, problems };
}

/** What the status message and problem of an invalid policy add: its routes are not served. */
const failsClosed = "the routes it applies to fail closed (500)";

function candidate(p: RateLimitPolicy, ref: SourceRef): Candidate {
  return {
    ref,
    order: { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(p) },
    targetRefs: arrayOf(p.spec?.targetRefs),
    generation: generationOf(p),
    settings: parseRateLimitSpec((p.spec ?? {}) as Record<string, unknown>),
  };
}

/**
 * The route with the limit of `owner` (a policy, or an Ingress for its annotations), named `policy`; when
 * `s` is why the limit cannot be enforced, a limit marked `invalid` (the enforcer answers 500).
 */
function withLimit(route: Route, owner: SourceRef, policy: string, s: RateLimitSettings | string): Route {
  if (typeof s === "string") {
    const invalid: RouteRateLimit = {
      source: owner,
      policy,
      bucket: `${policy}/${route.name}`,
      rules: [],
      clientIP: { trustedProxies: [] },
      exemptCIDRs: [],
      failureMode: "Closed",
      shadow: false,
      hideHeaders: false,
      invalid: s,
    };
    return { ...route, rateLimit: invalid };
  }
  const rateLimit: RouteRateLimit = {
    source: owner,
    policy,
    bucket: s.shared ? policy : `${policy}/${route.name}`,
    rules: s.rules,
    clientIP: s.clientIP,
    exemptCIDRs: s.exemptCIDRs,
    failureMode: s.failureMode,
    shadow: s.shadow,
    hideHeaders: s.hideHeaders,
  };
  return { ...route, rateLimit };
}
