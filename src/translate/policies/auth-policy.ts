/**
 * AuthPolicies onto the built model: each placed route gets the `auth` of the policy that wins GEP-713
 * attachment for it (policy-attachment.ts), and each policy gets its ancestor status. An Ingress may also
 * name a policy of its namespace with the annotation `gatehouse.dev/auth-policy`; that counts as a
 * targetRef to the Ingress (ingress/annotations/auth-policy.ts). Everything that goes wrong fails closed: an invalid policy still attaches
 * (its routes answer 401), so does one whose build throws, and an annotation naming a policy that does
 * not exist makes the Ingress's routes answer 401 too. Authentication comes from the most specific
 * policy that has some (one of address lists only leaves it to the levels above); address lists add up
 * across levels (a Gateway's deny list holds on a route with its own policy, as an Ingress's source-range
 * annotations hold beside one).
 */
import type { GatewayModel, IPAccessList, Problem, Route, RouteAuth } from "../../model/index.ts";
import type { AuthPolicy, PolicyTargetRef } from "../../sources/schema/auth-policy.ts";
import type { Secret } from "../../sources/schema/core.ts";
import { policyGroup } from "../../sources/schema/groups.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { arrayOf, creationMillis, nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { internalProblem, problem } from "../common/problems.ts";
import { compareStrings } from "../common/sort.ts";
import { ingressAuthentications } from "../ingress/access/authentication.ts";
import { variableAuthority } from "../ingress/access/external-auth.ts";
import { authPolicyAnnotations, missingAuthPolicyMessage } from "../ingress/annotations/auth-policy.ts";
import type * as AuthPolicyBuild from "./auth-policy-build.ts";
import { asksIPLists, onlyIPLists, policyIPAccess } from "./auth-policy-ip.ts";
import {
  type AttachablePolicy,
  attachPolicies,
  ingressGroup,
  mapPlacedRoutes,
  policyTargets,
} from "./policy-attachment.ts";
import { type PolicyStatusInput, policyProblems, policyStatus } from "./policy-status.ts";
import { SatisfyAnyCheck } from "./satisfy-any.ts";

/**
 * auth-policy-build.ts's, loaded at the first policy: the zod schema of a policy's spec
 * (auth-policy-spec.ts) was a twentieth of the start of a `gatehouse translate` that reads none.
 */
function buildRouteAuth(...args: Parameters<typeof AuthPolicyBuild.buildRouteAuth>): RouteAuth {
  return (require("./auth-policy-build.ts") as typeof AuthPolicyBuild).buildRouteAuth(...args);
}

export interface AuthPolicyTranslation {
  readonly model: GatewayModel;
  /** One per AuthPolicy, by namespace/name. */
  readonly statuses: readonly ObjectStatus[];
  readonly problems: readonly Problem[];
}

interface BuiltPolicy extends AttachablePolicy {
  readonly auth: RouteAuth;
  /** The policy's client address lists (auth-policy-ip.ts); undefined: none. */
  readonly ipAccess: IPAccessList | undefined;
  /** The policy asks for address lists only: a valid one puts no authentication on its routes. */
  readonly ipOnly: boolean;
  /** The spec names ipAllowList or ipDenyList: an invalid policy then refuses every address. */
  readonly asksIPLists: boolean;
  /** The spec says `satisfy: Any`. */
  readonly satisfyAny: boolean;
  readonly generation: number | undefined;
}

export function applyAuthPolicies(
  model: GatewayModel,
  snapshot: ResourceSnapshot,
  controllerName: string,
  /** `--global-auth-*` (TranslateOptions.globalAuth). */
  globalAuth?: Readonly<Record<string, string>>,
): AuthPolicyTranslation {
  const problems: Problem[] = [];
  const secrets = new Map<string, Secret>();
  for (const s of arrayOf(snapshot?.secrets))
    if (s?.metadata) secrets.set(`${namespaceOf(s)}/${nameOf(s)}`, s);
  const byKey = new Map<string, { policy: AuthPolicy; extra: PolicyTargetRef[] }>();
  for (const p of arrayOf(snapshot?.authPolicies))
    if (p?.metadata) byKey.set(`${namespaceOf(p)}/${nameOf(p)}`, { policy: p, extra: [] });
  // Ingresses whose annotation names a policy that does not exist: fail closed.
  const missing = new Map<string, { name: string; message: string }>();
  for (const a of authPolicyAnnotations(arrayOf(snapshot?.ingresses))) {
    const found = byKey.get(`${a.ingress.namespace}/${a.policy}`);
    if (found) found.extra.push({ group: ingressGroup, kind: "Ingress", name: a.ingress.name });
    else {
      const message = missingAuthPolicyMessage(a);
      missing.set(`${a.ingress.namespace}/${a.ingress.name}`, { name: a.policy, message });
      problems.push(problem(a.ingress, "AuthPolicyNotFound", message));
    }
  }
  const built: BuiltPolicy[] = [];
  for (const { policy, extra } of byKey.values()) {
    const ref = sourceRef("AuthPolicy", policy);
    const attach = {
      ref,
      order: { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(policy) },
      targetRefs: [...arrayOf(policy.spec?.targetRefs), ...extra],
      generation: generationOf(policy),
      asksIPLists: asksIPLists(policy.spec),
      satisfyAny: (policy.spec as { satisfy?: unknown } | undefined)?.satisfy === "Any",
    };
    try {
      const warnings: string[] = [];
      built.push({
        ...attach,
        auth: buildRouteAuth(ref, policy.spec, secrets, warnings),
        ipAccess: policyIPAccess(ref, policy.spec, []),
        ipOnly: onlyIPLists(policy.spec),
      });
      for (const w of warnings) problems.push(problem(ref, "CredentialWarning", w, "warning"));
    } catch (err) {
      // A policy that cannot be built still holds its targets, closed (never open). The error itself goes
      // to the problem (log) only: it may quote the spec or a Secret, which a status must not show.
      const reason = "the policy could not be built (internal error; see the Gatehouse log)";
      problems.push(internalProblem(ref, err));
      built.push({
        ...attach,
        auth: failClosed(ref.namespace, ref.name, reason),
        ipAccess: undefined,
        ipOnly: false,
      });
    }
  }
  const satisfy = new SatisfyAnyCheck(problems);
  const told = new Set<string>();
  for (const p of built) if (p.ipOnly && p.satisfyAny) satisfy.listsOnly(p.ref);
  const attached = attachPolicies(built, policyTargets(snapshot));
  // ingress-nginx `auth-type: basic`, `auth-url` (ingress/access/authentication.ts); an AuthPolicy that wins a route beats them.
  const annotated = ingressAuthentications(arrayOf(snapshot?.ingresses), secrets, problems, globalAuth);
  const place = (listener: Parameters<typeof attached.policiesFor>[0], route: Route): Route => {
    const why =
      route.source.kind === "Ingress"
        ? missing.get(`${route.source.namespace}/${route.source.name}`)
        : undefined;
    if (why !== undefined)
      return { ...route, auth: failClosed(route.source.namespace, why.name, why.message) };
    const levels = attached.policiesFor(listener, route);
    const p = levels[0];
    const ingress = route.source.kind === "Ingress" ? route.source : undefined;
    const guarded = p === undefined ? route : withPolicy(route, p, levels);
    if (ingress === undefined || annotated === undefined) return guarded;
    // A policy that authenticates replaces the annotations; one of address lists only adds to them.
    if (p !== undefined && guarded.auth !== undefined) {
      annotated.superseded(ingress, p.ref);
      return guarded;
    }
    const basic = annotated.authFor(ingress);
    return basic === undefined ? guarded : { ...guarded, auth: basic };
  };
  // Nothing can attach (the common case): skip walking every route of a large model.
  const next =
    built.length === 0 && missing.size === 0 && annotated === undefined
      ? model
      : mapPlacedRoutes(model, (listener, route, vh) => {
          const placed = place(listener, route);
          satisfy.note(placed);
          return hostBound(placed, vh.match === "Exact", problems, told);
        });
  const statuses: ObjectStatus[] = [];
  for (const p of [...built].sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  )) {
    const input: PolicyStatusInput = {
      group: policyGroup,
      ref: p.ref,
      generation: p.generation,
      controllerName,
      ancestors: attached.ancestors.get(`${p.ref.namespace}/${p.ref.name}`) ?? [],
      ...(p.auth.failClosed !== undefined ? { invalid: p.auth.failClosed } : {}),
    };
    statuses.push(policyStatus(input));
    problems.push(...policyProblems(input));
  }
  return { model: next, statuses, problems };
}

/**
 * `route` guarded by the policy that won it (`p`, the first of `levels`, most specific first): the
 * authentication of the first level whose policy has some (a valid policy of address lists only has none
 * and leaves it to the levels above: never open), and the address lists of every level after any the route
 * has (an Ingress's source-range annotations), every one checked. An invalid policy authenticates with its
 * fail-closed 401, whatever it asks for; an invalid winner adds no lists (its 401 refuses everything), an
 * invalid policy of another level that asks for lists adds one that refuses every address.
 */
function withPolicy(route: Route, p: BuiltPolicy, levels: readonly BuiltPolicy[]): Route {
  const own = levels.flatMap((l) => {
    if (l.auth.failClosed === undefined) return l.ipAccess !== undefined ? [l.ipAccess] : [];
    if (l === p || !l.asksIPLists) return [];
    return [{ source: l.ref, allow: [], deny: [], invalid: l.auth.failClosed }];
  });
  const lists = own.length === 0 ? {} : { ipAccess: [...(route.ipAccess ?? []), ...own] };
  const auth = levels.find((l) => l.auth.failClosed !== undefined || !l.ipOnly)?.auth;
  return auth === undefined ? { ...route, ...lists } : { ...route, ...lists, auth };
}

function failClosed(namespace: string, name: string, reason: string): RouteAuth {
  return {
    policy: { kind: "AuthPolicy", namespace, name },
    failClosed: reason,
    authorization: { requiredScopes: [], requiredClaims: [] },
    claimToHeaders: [],
  };
}

/**
 * A forward-auth URL or sign-in page whose host comes from a variable (`https://$host/oauth2/auth`) on a
 * route not served under one exact name: the client's Host would pick the service, so the route fails
 * closed (reported once per policy or Ingress). Under an exact name `$host` is that name.
 */
function hostBound(route: Route, exactHost: boolean, problems: Problem[], told: Set<string>): Route {
  const auth = route.auth;
  const e = auth?.external;
  if (auth === undefined || e === undefined || exactHost || auth.failClosed !== undefined) return route;
  const field = [e.url, e.signinURL].find((t) => t !== undefined && variableAuthority(t));
  if (field === undefined) return route;
  const why = `the forward-auth URL ${JSON.stringify(field)} takes its host from the request, and route ${route.name} is not served under one exact host name (a client would choose the service); every request answers 401`;
  const key = `${auth.policy.kind}/${auth.policy.namespace}/${auth.policy.name}`;
  if (!told.has(key)) {
    told.add(key);
    problems.push(problem(auth.policy, "ClientChosenAuthService", why));
  }
  return { ...route, auth: { ...auth, failClosed: why } };
}
