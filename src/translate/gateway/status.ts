import type { Problem, SourceRef } from "../../model/index.ts";
import { condition } from "../../status/conditions.ts";
import {
  ConditionType,
  GatewayClassReason,
  GatewayReason,
  gatewayGroup,
  ListenerReason,
  RouteReason,
} from "../../status/reasons.ts";
import type { Condition, ObjectStatus } from "../../status/types.ts";
import { problem } from "../common/problems.ts";
import type { RefIssue } from "./httproute/backend-refs.ts";
import { type AttachedKind, isProgrammed, type ListenerPlan, type Outcome } from "./listeners.ts";
import type { ParentResult } from "./route-attachment.ts";

const C = ConditionType;

export function outcomeCondition(
  type: string,
  o: Outcome,
  okReason: string,
  okMessage: string,
  gen: number | undefined,
): Condition {
  return o.ok
    ? condition(type, true, okReason, okMessage, gen)
    : condition(type, false, o.reason, o.message, gen);
}

/** GatewayClass Accepted: True, or False `InvalidParameters` when `refusal` says why (unsupported-fields.ts). */
export function gatewayClassStatus(
  name: string,
  controller: string,
  gen: number | undefined,
  refusal?: string,
): ObjectStatus {
  return {
    target: { group: gatewayGroup, kind: "GatewayClass", namespace: "", name },
    ...(gen !== undefined ? { generation: gen } : {}),
    status: {
      conditions: [
        refusal === undefined
          ? condition(C.Accepted, true, GatewayClassReason.Accepted, `handled by ${controller}`, gen)
          : condition(C.Accepted, false, GatewayClassReason.InvalidParameters, refusal, gen),
      ],
    },
  };
}

/**
 * One ListenerStatus: conditions Accepted, Programmed, ResolvedRefs, Conflicted, in that order, then
 * OverlappingTLSConfig when it is True (a negative-polarity condition that "MUST NOT be set when it is
 * False").
 */
export function listenerStatus(
  p: ListenerPlan,
  attachedRoutes: number,
  gen: number | undefined,
  /** A ListenerSet's listener: a conflict is also Programmed's reason (the v1.6.1 ListenerSet tests). */
  conflictProgrammed = false,
): Record<string, unknown> {
  const programmed = isProgrammed(p);
  const why = !p.accepted.ok
    ? "the listener is not accepted"
    : p.conflict
      ? "the listener conflicts with another"
      : "no certificate could be resolved";
  return {
    name: p.name,
    supportedKinds: p.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
    attachedRoutes,
    conditions: [
      outcomeCondition(
        C.Accepted,
        p.conflict ? { ok: false, ...p.conflict } : p.accepted,
        ListenerReason.Accepted,
        "listener accepted",
        gen,
      ),
      programmed
        ? condition(C.Programmed, true, ListenerReason.Programmed, "listener programmed", gen)
        : conflictProgrammed && p.conflict && p.accepted.ok
          ? condition(C.Programmed, false, p.conflict.reason, p.conflict.message, gen)
          : condition(C.Programmed, false, ListenerReason.Invalid, why, gen),
      outcomeCondition(
        C.ResolvedRefs,
        p.resolvedRefs,
        ListenerReason.ResolvedRefs,
        "all references resolved",
        gen,
      ),
      p.conflict
        ? condition(C.Conflicted, true, p.conflict.reason, p.conflict.message, gen)
        : condition(C.Conflicted, false, ListenerReason.NoConflicts, "no conflicts", gen),
      ...(p.overlap
        ? [condition(C.OverlappingTLSConfig, true, p.overlap.reason, p.overlap.message, gen)]
        : []),
    ],
  };
}

/** What a route's status is made of (HTTPRouteTranslation and TLSRouteTranslation both have it). */
export interface RouteStatusInput {
  readonly ref: SourceRef;
  readonly refIssues: readonly RefIssue[];
  readonly dropped: readonly { readonly message: string }[];
  readonly invalid?: unknown;
}

/**
 * Our condition on a route parent whose listeners (some or all) the route is attached to but that serve
 * nothing: not accepted, conflicted, without a certificate, or of a Gateway that is not programmed. The
 * spec keeps such a route Accepted ("Listener or Route status does not impact successful attachment");
 * this says it is not served there. Negative polarity, set only when True.
 */
export const listenerNotServingCondition = "gatehouse.dev/ListenerNotServing";

/**
 * RouteParentStatus entries for our parents: Accepted, ResolvedRefs, PartiallyInvalid when rules were
 * dropped, and `gatehouse.dev/ListenerNotServing` when a listener it attached to serves nothing. The same
 * for HTTPRoutes and TLSRoutes (`kind`).
 */
export function httpRouteStatus(
  t: RouteStatusInput,
  parents: readonly ParentResult[],
  controller: string,
  gen: number | undefined,
  kind: AttachedKind = "HTTPRoute",
): ObjectStatus {
  const issue = t.refIssues[0];
  const resolved: Outcome = issue
    ? { ok: false, reason: issue.reason, message: t.refIssues.map((i) => i.message).join("; ") }
    : { ok: true };
  return {
    target: { group: gatewayGroup, kind, namespace: t.ref.namespace, name: t.ref.name },
    ...(gen !== undefined ? { generation: gen } : {}),
    status: {
      parents: parents.map((p) => ({
        parentRef: p.parentRef,
        controllerName: controller,
        conditions: [
          outcomeCondition(C.Accepted, p.accepted, RouteReason.Accepted, "route accepted", gen),
          outcomeCondition(
            C.ResolvedRefs,
            resolved,
            RouteReason.ResolvedRefs,
            "all references resolved",
            gen,
          ),
          ...(t.dropped.length > 0 && !t.invalid
            ? [
                condition(
                  C.PartiallyInvalid,
                  true,
                  RouteReason.UnsupportedValue,
                  `Dropped Rule(s): ${t.dropped.map((d) => d.message).join("; ")}`,
                  gen,
                ),
              ]
            : []),
          ...(p.accepted.ok && p.notServing
            ? [condition(listenerNotServingCondition, true, p.notServing.reason, p.notServing.message, gen)]
            : []),
        ],
      })),
    },
  };
}

/** Conditions that are bad news when True; every other condition is bad news when False. */
const negativePolarity: ReadonlySet<string> = new Set([
  C.Conflicted,
  C.PartiallyInvalid,
  C.OverlappingTLSConfig,
  C.InsecureFrontendValidationMode,
  listenerNotServingCondition,
]);

/** Of those, the ones that are warnings: something is served, but not all the user may expect. */
const warnings: ReadonlySet<string> = new Set([
  C.PartiallyInvalid,
  C.InsecureFrontendValidationMode,
  C.OverlappingTLSConfig,
  listenerNotServingCondition,
]);

/**
 * Problems for logs and `gatehouse translate`, read back from the statuses: every negative condition
 * (Accepted/ResolvedRefs/Programmed False; Conflicted, PartiallyInvalid, OverlappingTLSConfig and
 * gatehouse.dev/ListenerNotServing True), naming the listener or parent it is about. Programmed False is
 * left out where Accepted is already False (it says nothing new).
 */
export function problemsFromStatus(s: ObjectStatus): Problem[] {
  const object = { kind: s.target.kind, namespace: s.target.namespace, name: s.target.name };
  const out: Problem[] = [];
  const visit = (conditions: unknown, where: string) => {
    const list = (Array.isArray(conditions) ? conditions : []) as Condition[];
    const notAccepted = list.some((c) => c.type === C.Accepted && c.status === "False");
    const otherFailure = list.some(
      (c) => c.type !== C.Programmed && c.status === "False" && c.type !== C.Conflicted,
    );
    for (const c of list) {
      const negative = negativePolarity.has(c.type) ? c.status === "True" : c.status === "False";
      if (!negative || (c.type === C.Programmed && otherFailure) || (c.type === C.Conflicted && notAccepted))
        continue;
      const severity =
        warnings.has(c.type) || (c.type === C.Accepted && c.status === "True") ? "warning" : "error";
      out.push(problem(object, c.reason, `${where}${c.type}: ${c.message}`, severity));
    }
  };
  visit(s.status.conditions, "");
  for (const l of (s.status.listeners ?? []) as { name: string; conditions: unknown }[]) {
    visit(l.conditions, `listener "${l.name}": `);
  }
  for (const p of (s.status.parents ?? []) as {
    parentRef: { namespace?: string; name: string };
    conditions: unknown;
  }[]) {
    visit(
      p.conditions,
      `parent Gateway ${p.parentRef.namespace ?? s.target.namespace}/${p.parentRef.name}: `,
    );
  }
  return out;
}

export interface GatewayConditions {
  /** `okReason`/`okMessage` replace `Accepted` when the Gateway is accepted with some listeners invalid. */
  readonly accepted: Outcome & { readonly okReason?: string; readonly okMessage?: string };
  readonly programmed: Outcome;
  /** Gateway ResolvedRefs, set only for `spec.tls.backend.clientCertificateRef` (gateway-tls.ts). */
  readonly resolvedRefs?: Outcome;
  /** Set when `spec.tls.frontend` allows AllowInsecureFallback: the InsecureFrontendValidationMode message. */
  readonly insecureFrontend?: string;
}

export function gatewayStatus(
  target: { namespace: string; name: string },
  address: string | undefined,
  conds: GatewayConditions,
  listeners: readonly Record<string, unknown>[],
  gen: number | undefined,
  /** ListenerSets accepted onto this Gateway (`status.attachedListenerSets`); absent when it admits none. */
  attachedListenerSets?: number,
): ObjectStatus {
  return {
    target: { group: gatewayGroup, kind: "Gateway", namespace: target.namespace, name: target.name },
    ...(gen !== undefined ? { generation: gen } : {}),
    status: {
      addresses: address ? [{ type: "IPAddress", value: address }] : [],
      ...(attachedListenerSets !== undefined ? { attachedListenerSets } : {}),
      conditions: [
        outcomeCondition(
          C.Accepted,
          conds.accepted,
          conds.accepted.okReason ?? "Accepted",
          conds.accepted.okMessage ?? "gateway accepted",
          gen,
        ),
        outcomeCondition(C.Programmed, conds.programmed, "Programmed", "gateway programmed", gen),
        ...(conds.resolvedRefs
          ? [
              outcomeCondition(
                C.ResolvedRefs,
                conds.resolvedRefs,
                "ResolvedRefs",
                "all references resolved",
                gen,
              ),
            ]
          : []),
        ...(conds.insecureFrontend
          ? [
              condition(
                C.InsecureFrontendValidationMode,
                true,
                GatewayReason.ConfigurationChanged,
                conds.insecureFrontend,
                gen,
              ),
            ]
          : []),
      ],
      listeners,
    },
  };
}
