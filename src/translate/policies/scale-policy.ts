/**
 * ScaleToZeroPolicies (and a Service's `gatehouse.dev/scale-*` annotations) onto the built model's
 * backends: every backend of a targeted Service port gets `activation` (docs/scale-to-zero.md). GEP-713
 * attachment as for BackendTrafficPolicy: targetRefs name core Services in the policy's namespace
 * (`sectionName` one port by name); a policy naming the port is more specific than one naming the whole
 * Service and applies there instead; several on the very same target: the oldest wins (creationTimestamp,
 * then namespace/name) and the others are Conflicted there. An invalid policy applies nowhere (its
 * backends answer 503 while they have no endpoint, as without a policy) and says why on every target it
 * found. A policy wins over the Service's annotations; annotations that do not parse are a warning on the
 * Service.
 */
import type { Backend, BackendActivation, GatewayModel, Problem, SourceRef } from "../../model/index.ts";
import type { Service } from "../../sources/schema/core.ts";
import { policyGroup } from "../../sources/schema/groups.ts";
import type { ScaleToZeroPolicy } from "../../sources/schema/scale-policy.ts";
import type { ResourceSnapshot } from "../../sources/snapshot.ts";
import { generationOf } from "../../status/conditions.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { arrayOf, creationMillis, sourceRef } from "../common/objects.ts";
import { builtEach, problem } from "../common/problems.ts";
import { compareSourceAge, compareStrings, type SourceOrder } from "../common/sort.ts";
import {
  ancestorRefOf,
  attachServiceTarget,
  isServiceRef,
  type ServiceWinners,
  targetRefsOf,
} from "./backend/service-targets.ts";
import type { AncestorResult } from "./policy-attachment.ts";
import { policyProblems, policyStatus } from "./policy-status.ts";
import { parseScaleAnnotations, parseScaleSpec, type ScaleSettings } from "./scale-policy-spec.ts";

export interface ScalePolicyTranslation {
  readonly model: GatewayModel;
  /** One per ScaleToZeroPolicy, by namespace/name. */
  readonly statuses: readonly ObjectStatus[];
  readonly problems: readonly Problem[];
}

interface Candidate {
  readonly ref: SourceRef;
  readonly order: SourceOrder;
  readonly policy: ScaleToZeroPolicy;
  readonly settings: ScaleSettings | string;
  readonly valid: boolean;
}

/** The policy deciding on each target key (`<ns>/<service>` or `<ns>/<service>#<port name>`). */
type Winners = ServiceWinners<Candidate>;

export function applyScaleToZeroPolicies(
  model: GatewayModel,
  snapshot: ResourceSnapshot,
  services: ReadonlyMap<string, Service>,
  controllerName: string,
): ScalePolicyTranslation {
  const problems: Problem[] = [];
  const candidates = builtEach(
    snapshot?.scaleToZeroPolicies,
    "ScaleToZeroPolicy",
    (p, ref): Candidate => {
      const settings = parseScaleSpec((p.spec ?? {}) as Record<string, unknown>);
      return {
        ref,
        policy: p,
        settings,
        valid: typeof settings !== "string",
        order: { namespace: ref.namespace, name: ref.name, createdMs: creationMillis(p) },
      };
    },
    problems,
  );
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
        ? {
            invalid: `${c.settings}; the policy is not applied (its backends answer 503 while they have no endpoint)`,
          }
        : {}),
    };
    statuses.push(policyStatus(input));
    problems.push(...policyProblems(input));
  }
  const applied = withActivation(model, services, winners, problems);
  return { model: applied, statuses, problems };
}

/** The policy's outcome on each of its targets; valid policies claim the targets they win. */
function attach(c: Candidate, services: ReadonlyMap<string, Service>, winners: Winners): AncestorResult[] {
  return targetRefsOf(c.policy.spec?.targetRefs).map((t): AncestorResult => {
    if (isServiceRef(t)) return attachServiceTarget(c, t, services, winners);
    const message = `target kind ${t.group ? `${t.group}/` : ""}${t.kind} is not supported (core Service)`;
    return { ancestorRef: ancestorRefOf(t, c.ref.namespace), outcome: "Invalid", message };
  });
}

/** Every backend of a targeted (or annotated) Service port with its activation settings. */
function withActivation(
  model: GatewayModel,
  services: ReadonlyMap<string, Service>,
  winners: Winners,
  problems: Problem[],
): GatewayModel {
  let changed = false;
  const backends: Record<string, Backend> = {};
  const annotated = new Map<string, ScaleSettings | string | undefined>();
  for (const [id, b] of Object.entries(model.backends)) {
    backends[id] = b;
    const key = `${b.service.namespace}/${b.service.name}`;
    const svc = services.get(key);
    // A backend on the Service's cluster IP always has its one endpoint: nothing to wake.
    if (svc === undefined || id.includes("@cluster-ip")) continue;
    const port = arrayOf(svc.spec?.ports).find((p) => p?.port === b.service.port);
    if (port === undefined) continue;
    const c = (port.name ? winners.get(`${key}#${port.name}`) : undefined) ?? winners.get(key);
    let source: SourceRef | undefined = c?.ref;
    let settings: ScaleSettings | string | undefined = c?.settings;
    if (c === undefined) {
      if (!annotated.has(key)) {
        const parsed = parseScaleAnnotations(svc.metadata.annotations);
        annotated.set(key, parsed);
        if (typeof parsed === "string")
          problems.push(
            problem(
              sourceRef("Service", svc),
              "InvalidScaleAnnotation",
              `${parsed}; the Service is not scaled to zero (it answers 503 while it has no endpoint)`,
              "warning",
            ),
          );
      }
      settings = annotated.get(key);
      source = sourceRef("Service", svc);
    }
    if (settings === undefined || typeof settings === "string" || source === undefined) continue;
    const servicePort: BackendActivation["servicePort"] = {
      ...(port.name ? { name: port.name } : {}),
      port: port.port,
      ...(port.targetPort !== undefined ? { targetPort: port.targetPort } : {}),
    };
    backends[id] = { ...b, activation: { source, ...settings, servicePort } };
    changed = true;
  }
  return changed ? { ...model, backends } : model;
}
