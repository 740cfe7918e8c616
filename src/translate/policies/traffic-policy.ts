/**
 * BackendTrafficPolicies onto the built model's backends (docs/traffic-policy.md). A policy names, in
 * its own namespace (GEP-713 targetRefs): core Services (`sectionName` one port by name:
 * backend/service-targets.ts), HTTPRoutes and GRPCRoutes (`sectionName` one rule) and Gateways
 * (`sectionName` one listener: policy-attachment.ts), and sets `healthCheck`, `compression`, `circuitBreaker` and
 * `loadBalancer`. Every backend of a targeted Service port gets its policy's settings whichever route
 * reaches it; a route of a targeted HTTPRoute, GRPCRoute or Gateway gets, for each field group its
 * Service's policy leaves unset, the most specific route-level policy's (backend/route-targets.ts). A
 * policy naming a section is more specific than one naming the whole object and applies there instead
 * (neither is Conflicted); several on the very same target: the oldest wins (creationTimestamp, then
 * namespace/name) and the others are Conflicted there. Every other backend gets the gateway's
 * compression (`--compression`), if it has one. An invalid policy applies nowhere (there is nothing to
 * fail closed: its backends are served as without it) and says why on every target it found.
 */
import type { Backend, GatewayModel, Problem } from "../../model/index.ts";
import type { Service } from "../../sources/schema/core.ts";
import { policyGroup } from "../../sources/schema/groups.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import { gatewayGroup } from "../../status/reasons.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { gatewayListenerSection } from "../common/names.ts";
import { creationMillis } from "../common/objects.ts";
import { builtEach, problem } from "../common/problems.ts";
import { compareSourceAge, compareStrings } from "../common/sort.ts";
import { applyRouteLevelPolicies } from "./backend/route-targets.ts";
import {
  ancestorRefOf,
  attachServiceTarget,
  isServiceRef,
  type ServiceWinners,
  serviceWinnerFor,
  type TargetRef,
  targetRefsOf,
} from "./backend/service-targets.ts";
import { allFrom, backendDefaults, type TrafficCandidate, withSettings } from "./backend/traffic-backends.ts";
import { circuitBreakerWarning, setsCaps } from "./circuit-breaker-spec.ts";
import { type CompressionDefaults, compressionDefaults } from "./compression-spec.ts";
import { routeAlgorithmWarnings } from "./load-balancer-spec.ts";
import {
  type AncestorResult,
  type AttachmentResult,
  attachPolicies,
  policyTargets,
} from "./policy-attachment.ts";
import { policyProblems, policyStatus } from "./policy-status.ts";
import { canEject, parseTrafficPolicySpec, type TrafficPolicySettings } from "./traffic-policy-spec.ts";

export interface TrafficPolicyTranslation {
  readonly model: GatewayModel;
  /** One per BackendTrafficPolicy, by namespace/name. */
  readonly statuses: readonly ObjectStatus[];
  readonly problems: readonly Problem[];
}

/** Route-level target kinds (group gateway.networking.k8s.io). */
const routeLevelKinds = new Set(["HTTPRoute", "GRPCRoute", "Gateway"]);
const isRouteLevelRef = (t: TargetRef) => t.group === gatewayGroup && routeLevelKinds.has(t.kind);

export function applyBackendTrafficPolicies(
  model: GatewayModel,
  snapshot: ResourceSnapshot,
  services: ReadonlyMap<string, Service>,
  controllerName: string,
  /** The gateway's compression (`--compression*`), each policy's base. */
  compression: CompressionDefaults = compressionDefaults,
): TrafficPolicyTranslation {
  const problems: Problem[] = [];
  const candidates = builtEach(
    snapshot?.backendTrafficPolicies,
    "BackendTrafficPolicy",
    (p, ref): TrafficCandidate => {
      const settings = parseTrafficPolicySpec((p.spec ?? {}) as Record<string, unknown>);
      return {
        ref,
        policy: p,
        settings,
        valid: typeof settings !== "string",
        targetRefs: targetRefsOf(p.spec?.targetRefs).filter(isRouteLevelRef),
        order: { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(p) },
      };
    },
    problems,
  );
  const defaults = backendDefaults(compression);
  candidates.sort((a, b) => compareSourceAge(a.order, b.order));
  const serviceWinners: ServiceWinners<TrafficCandidate> = new Map();
  const serviceResults = new Map<TrafficCandidate, AncestorResult[]>();
  for (const c of candidates)
    serviceResults.set(
      c,
      targetRefsOf(c.policy.spec?.targetRefs)
        .filter(isServiceRef)
        .map((t) => attachServiceTarget(c, t, services, serviceWinners)),
    );
  // Only valid policies win route-level targets; an invalid one is attached alone, for its status.
  const targets = policyTargets(snapshot);
  const attached = attachPolicies(
    candidates.filter((c) => c.valid),
    targets,
    { grpcRoutes: true },
  );
  const statuses: ObjectStatus[] = [];
  for (const c of [...candidates].sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  )) {
    const routeResults = c.valid ? attached : attachPolicies([c], targets, { grpcRoutes: true });
    const input = {
      group: policyGroup,
      ref: c.ref,
      generation: generationOf(c.policy),
      controllerName,
      ancestors: ancestorsOf(c, serviceResults.get(c) ?? [], routeResults),
      ...(typeof c.settings === "string"
        ? { invalid: `${c.settings}; the policy is not applied (its backends are served as without it)` }
        : {}),
    };
    statuses.push(policyStatus(input));
    problems.push(...policyProblems(input));
    const why = typeof c.settings === "string" ? undefined : noEffect(c.settings);
    if (why !== undefined) problems.push(problem(c.ref, "NoEffect", why, "warning"));
    const cb = typeof c.settings === "string" ? undefined : c.settings.circuitBreaker;
    const pending = cb === undefined ? undefined : circuitBreakerWarning(cb);
    if (pending !== undefined) problems.push(problem(c.ref, "NoEffect", pending, "warning"));
  }
  const serviceWinner = (b: Backend) => serviceWinnerFor(serviceWinners, services, b);
  let applied = model;
  if (serviceWinners.size > 0 || defaults.flags !== undefined) {
    let changed = false;
    const backends: Record<string, Backend> = {};
    for (const [id, b] of Object.entries(model.backends)) {
      backends[id] = withSettings(b, allFrom(serviceWinner(b)), defaults, problems);
      if (backends[id] !== b) changed = true;
    }
    if (changed) applied = { ...model, backends };
  }
  const routed = applyRouteLevelPolicies(
    applied,
    { originals: model.backends, policiesFor: attached.policiesFor, serviceWinner, defaults },
    problems,
  );
  applied = routed.model;
  problems.push(...unreached(candidates, attached, routed.reached));
  problems.push(...streamListenersLeft(candidates, model, serviceWinner));
  problems.push(...routeAlgorithmWarnings(applied));
  return { model: applied, statuses, problems };
}

/** The policy's outcome on each of its targets, in targetRef order (Service, route-level, other kinds). */
function ancestorsOf(
  c: TrafficCandidate,
  serviceResults: readonly AncestorResult[],
  routeResults: AttachmentResult<TrafficCandidate>,
): AncestorResult[] {
  const services = [...serviceResults];
  const routes = [...(routeResults.ancestors.get(`${c.ref.namespace}/${c.ref.name}`) ?? [])];
  return targetRefsOf(c.policy.spec?.targetRefs).flatMap((t): AncestorResult[] => {
    if (isServiceRef(t)) return services.splice(0, 1);
    if (isRouteLevelRef(t)) return routes.splice(0, 1);
    const message = `target kind ${t.group ? `${t.group}/` : ""}${t.kind} is not supported (core Service, HTTPRoute, GRPCRoute, Gateway)`;
    return [{ ancestorRef: ancestorRefOf(t, c.ref.namespace), outcome: "Invalid", message }];
  });
}

/** A warning for each valid policy that wins a route-level target but no route there forwards anywhere. */
function unreached(
  candidates: readonly TrafficCandidate[],
  attached: AttachmentResult<TrafficCandidate>,
  reached: ReadonlySet<TrafficCandidate>,
): Problem[] {
  return candidates.flatMap((c) => {
    const won = attached.ancestors
      .get(`${c.ref.namespace}/${c.ref.name}`)
      ?.some((a) => a.outcome === "Accepted");
    if (!c.valid || won !== true || reached.has(c)) return [];
    const why =
      "no route of its HTTPRoute, GRPCRoute or Gateway targets is placed on a listener and forwards to a backend: it applies nowhere yet";
    return [problem(c.ref, "NoEffect", why, "warning")];
  });
}

/**
 * TLS, TCP and UDP listeners pipe bytes to an endpoint picked round robin (src/proxy/passthrough/): none
 * of a BackendTrafficPolicy's settings applies there. A policy whose Gateway target has such listeners
 * with routes, or whose Service a TLSRoute, TCPRoute or UDPRoute sends to, says so, never silently.
 */
function streamListenersLeft(
  candidates: readonly TrafficCandidate[],
  model: GatewayModel,
  serviceWinner: (b: Backend) => TrafficCandidate | undefined,
): Problem[] {
  const out: Problem[] = [];
  const said = new Set<string>();
  const say = (c: TrafficCandidate, what: string) => {
    const key = `${c.ref.namespace}/${c.ref.name}\n${what}`;
    if (said.has(key)) return;
    said.add(key);
    const why = `${what} carries TLSRoute, TCPRoute or UDPRoute traffic, which is piped to endpoints round robin: the policy's settings do not apply to it`;
    out.push(problem(c.ref, "NoEffect", why, "warning"));
  };
  for (const l of model.passthroughListeners ?? []) {
    if (l.routes.length === 0) continue;
    for (const c of candidates) {
      if (!c.valid) continue;
      for (const t of c.targetRefs) {
        if (t.kind !== "Gateway") continue;
        const section = gatewayListenerSection(l.name, c.ref.namespace, t.name);
        if (section === undefined || (t.sectionName !== undefined && t.sectionName !== section)) continue;
        say(c, `listener ${section} of Gateway ${c.ref.namespace}/${t.name}`);
      }
    }
    for (const r of l.routes)
      for (const wb of r.backends) {
        const b = model.backends[wb.backendId];
        const c = b === undefined ? undefined : serviceWinner(b);
        if (c !== undefined) say(c, `backend ${wb.backendId}`);
      }
  }
  return out;
}

/** Why a valid policy changes nothing, if it does not. */
function noEffect(s: TrafficPolicySettings): string | undefined {
  if (s.compression !== undefined || s.active !== undefined || s.loadBalancer !== undefined) return undefined;
  if (s.circuitBreaker !== undefined && setsCaps(s.circuitBreaker)) return undefined;
  if (s.passive === undefined)
    return "sets no healthCheck, loadBalancer, compression or circuitBreaker: the policy changes nothing";
  if (!canEject(s.passive))
    return "every consecutive count of healthCheck.passive is 0: no endpoint is ever ejected";
  return undefined;
}
