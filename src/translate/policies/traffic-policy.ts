/**
 * BackendTrafficPolicies onto the built model's backends: a policy names core Services in its own
 * namespace (GEP-713 targetRefs; `sectionName` one port by name), and every backend of such a Service
 * port gets the policy's `healthCheck`, `compression`, `circuitBreaker` and `loadBalancer`
 * (docs/traffic-policy.md); every other backend
 * gets the gateway's compression (`--compression`, compression-spec.ts), if it has one. A policy naming
 * the port is more specific than one naming the whole Service and applies there instead (neither is
 * Conflicted, as for BackendTLSPolicy); several on the very same target: the oldest wins
 * (creationTimestamp, then namespace/name) and the others are Conflicted there. An invalid policy
 * applies nowhere (there is nothing to fail closed: its backends are served as without it) and says why
 * on every target it found.
 */
import type {
  Backend,
  BackendHealthCheck,
  GatewayModel,
  PassiveHealthCheck,
  Problem,
  SourceRef,
} from "../../model/index.ts";
import type { Service } from "../../sources/schema/core.ts";
import { policyGroup } from "../../sources/schema/groups.ts";
import type { BackendTrafficPolicy } from "../../sources/schema/traffic-policy.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { arrayOf, creationMillis, sourceRef } from "../common/objects.ts";
import { internalProblem, problem } from "../common/problems.ts";
import { compareSourceAge, compareStrings, type SourceOrder } from "../common/sort.ts";
import { circuitBreakerOf, circuitBreakerWarning, setsCaps } from "./circuit-breaker-spec.ts";
import { type CompressionDefaults, compressionDefaults, effectiveCompression } from "./compression-spec.ts";
import { routeAlgorithmWarnings } from "./load-balancer-spec.ts";
import type { AncestorResult } from "./policy-attachment.ts";
import { policyProblems, policyStatus } from "./policy-status.ts";
import { canEject, parseTrafficPolicySpec, type TrafficPolicySettings } from "./traffic-policy-spec.ts";

export interface TrafficPolicyTranslation {
  readonly model: GatewayModel;
  /** One per BackendTrafficPolicy, by namespace/name. */
  readonly statuses: readonly ObjectStatus[];
  readonly problems: readonly Problem[];
}

interface Candidate {
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  readonly policy: BackendTrafficPolicy;
  readonly settings: TrafficPolicySettings | string;
}

/** The policy deciding on each target key (`<ns>/<service>` or `<ns>/<service>#<port name>`). */
type Winners = Map<string, Candidate>;

export function applyBackendTrafficPolicies(
  model: GatewayModel,
  snapshot: ResourceSnapshot,
  services: ReadonlyMap<string, Service>,
  controllerName: string,
  /** The gateway's compression (`--compression*`), each policy's base. */
  compression: CompressionDefaults = compressionDefaults,
): TrafficPolicyTranslation {
  const problems: Problem[] = [];
  const candidates: Candidate[] = [];
  for (const p of arrayOf(snapshot?.backendTrafficPolicies)) {
    if (!p?.metadata) continue;
    const ref = sourceRef("BackendTrafficPolicy", p);
    try {
      const settings = parseTrafficPolicySpec((p.spec ?? {}) as Record<string, unknown>);
      candidates.push({
        ref,
        policy: p,
        settings,
        order: { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(p) },
      });
    } catch (err) {
      problems.push(internalProblem(ref, err));
    }
  }
  if (candidates.length === 0)
    return { model: withPolicies(model, services, new Map(), compression, problems), statuses: [], problems };
  candidates.sort((a, b) => compareSourceAge(a.order, b.order));
  const winners: Winners = new Map();
  const ancestors = new Map<Candidate, AncestorResult[]>();
  for (const c of candidates) ancestors.set(c, attach(c, services, winners));
  const statuses: ObjectStatus[] = [];
  for (const c of [...candidates].sort(
    (a, b) => compareStrings(a.ref.namespace, b.ref.namespace) || compareStrings(a.ref.name, b.ref.name),
  )) {
    const input = {
      group: policyGroup,
      ref: c.ref,
      generation: generationOf(c.policy),
      controllerName,
      ancestors: ancestors.get(c) ?? [],
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
  const applied = withPolicies(model, services, winners, compression, problems);
  problems.push(...routeAlgorithmWarnings(applied));
  return { model: applied, statuses, problems };
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

/** The policy's outcome on each of its targets; valid policies claim the targets they win. */
function attach(c: Candidate, services: ReadonlyMap<string, Service>, winners: Winners): AncestorResult[] {
  const ns = c.ref.namespace;
  const results: AncestorResult[] = [];
  const seen = new Set<string>();
  for (const t of arrayOf(c.policy.spec?.targetRefs)) {
    if (typeof t?.name !== "string" || typeof t.kind !== "string" || typeof t.group !== "string") continue;
    const section = t.sectionName === undefined || t.sectionName === "" ? undefined : t.sectionName;
    const key = `${ns}/${t.name}${section === undefined ? "" : `#${section}`}`;
    if (seen.has(`${t.group}/${t.kind}/${key}`)) continue;
    seen.add(`${t.group}/${t.kind}/${key}`);
    const ancestorRef = {
      group: t.group,
      kind: t.kind,
      namespace: ns,
      name: t.name,
      ...(section !== undefined ? { sectionName: section } : {}),
    };
    if (t.group !== "" || t.kind !== "Service") {
      const what = `${t.group ? `${t.group}/` : ""}${t.kind}`;
      const message = `target kind ${what} is not supported (core Service; HTTPRoute and Gateway targets are not implemented yet)`;
      results.push({ ancestorRef, outcome: "Invalid", message });
      continue;
    }
    const svc = services.get(`${ns}/${t.name}`);
    if (svc === undefined) {
      results.push({ ancestorRef, outcome: "TargetNotFound", message: `Service ${ns}/${t.name} not found` });
      continue;
    }
    if (section !== undefined && !arrayOf(svc.spec?.ports).some((p) => p?.name === section)) {
      const message = `Service ${ns}/${t.name} has no port named "${section}"`;
      results.push({ ancestorRef, outcome: "TargetNotFound", message });
      continue;
    }
    // An invalid policy claims nothing: it is reported where it would have applied.
    const winner = typeof c.settings === "string" ? undefined : winners.get(key);
    if (winner === undefined) {
      if (typeof c.settings !== "string") winners.set(key, c);
      results.push({ ancestorRef, outcome: "Accepted", message: "the policy applies to this target" });
    } else {
      const message = `BackendTrafficPolicy ${winner.ref.namespace}/${winner.ref.name} targets the same object and is older (or first by namespace/name when ages tie); it applies instead`;
      results.push({ ancestorRef, outcome: "Conflicted", message });
    }
  }
  return results;
}

/**
 * Every backend of a targeted Service port with its winning policy's health check and compression;
 * the others with the gateway's compression. The flags' compression is one object shared by them all.
 */
function withPolicies(
  model: GatewayModel,
  services: ReadonlyMap<string, Service>,
  winners: Winners,
  defaults: CompressionDefaults,
  problems: Problem[],
): GatewayModel {
  if (winners.size === 0 && defaults.codings.length === 0) return model;
  const flags = effectiveCompression(defaults, undefined);
  let changed = false;
  const backends: Record<string, Backend> = {};
  for (const [id, b] of Object.entries(model.backends)) {
    const key = `${b.service.namespace}/${b.service.name}`;
    const portName = arrayOf(services.get(key)?.spec?.ports).find((p) => p?.port === b.service.port)?.name;
    const c = (portName ? winners.get(`${key}#${portName}`) : undefined) ?? winners.get(key);
    const settings = c === undefined || typeof c.settings === "string" ? undefined : c.settings;
    const own = settings?.compression;
    const compression =
      own === undefined || c === undefined
        ? flags
        : effectiveCompression(defaults, { settings: own, source: c.ref });
    const healthCheck = c === undefined ? undefined : healthCheckOf(c, b, settings, problems);
    const cb = settings?.circuitBreaker;
    const circuitBreaker = cb === undefined || c === undefined ? undefined : circuitBreakerOf(cb, c.ref);
    const lb = settings?.loadBalancer;
    const loadBalancer = lb === undefined || c === undefined ? undefined : { source: c.ref, ...lb };
    if (
      healthCheck === undefined &&
      compression === undefined &&
      circuitBreaker === undefined &&
      loadBalancer === undefined
    ) {
      backends[id] = b;
      continue;
    }
    changed = true;
    backends[id] = {
      ...b,
      ...(healthCheck !== undefined ? { healthCheck } : {}),
      ...(compression !== undefined ? { compression } : {}),
      ...(circuitBreaker !== undefined ? { circuitBreaker } : {}),
      ...(loadBalancer !== undefined ? { loadBalancer } : {}),
    };
  }
  return changed ? { ...model, backends } : model;
}

/**
 * The backend's health checking: passive when it can eject, active unless the backend speaks HTTP/2
 * with prior knowledge (h2c, gRPC): the probes are HTTP/1.1, so such a backend is not probed and a
 * warning says so.
 */
function healthCheckOf(
  c: Candidate,
  b: Backend,
  settings: TrafficPolicySettings | undefined,
  problems: Problem[],
): BackendHealthCheck | undefined {
  const passive = settings?.passive;
  const eject = passive !== undefined && canEject(passive);
  let active = settings?.active;
  if (active !== undefined && b.protocol === "h2c") {
    const why = `healthCheck.active: backend ${b.id} speaks HTTP/2 with prior knowledge (h2c, gRPC) and the probes are HTTP/1.1: it is not probed`;
    problems.push(problem(c.ref, "NotProbed", why, "warning"));
    active = undefined;
  }
  if (!eject && active === undefined) return undefined;
  return {
    source: c.ref,
    ...(eject ? { passive: passive as PassiveHealthCheck } : {}),
    ...(active !== undefined ? { active } : {}),
  };
}
