/**
 * ListenerSets (standard in v1.6.1): listeners a Gateway of ours takes from other objects, when its
 * `spec.allowedListeners.namespaces` admits the ListenerSet's namespace (`None`, the default, admits none:
 * the ListenerSet is Accepted and Programmed False `NotAllowed`). An admitted ListenerSet's listeners are
 * validated as a Gateway's are (certificates read in the ListenerSet's namespace, ReferenceGrants `from`
 * kind ListenerSet), then merged after the Gateway's own in the spec's precedence (the Gateway, then
 * ListenerSets oldest first, then by namespace/name): a listener that clashes with an earlier one on its
 * port (another protocol: ProtocolConflict; the same protocol and hostname: HostnameConflict) is refused,
 * the earlier one unchanged. A ListenerSet with no valid listener is Accepted and Programmed False
 * `ListenersNotValid`. Each ListenerSet becomes an entry beside the Gateways (route-attachment.ts): routes
 * attach to it only through a parentRef of kind ListenerSet, and its listeners bind on the Gateway's
 * address under their own names (`listenerset/<ns>/<name>/<listener>`).
 */
import type { Problem } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import type { ListenerSet, ReferenceGrant } from "../../sources/schema/gateway.ts";
import { generationOf } from "../../status/conditions.ts";
import { ConditionType, GatewayReason, gatewayGroup, ListenerReason } from "../../status/reasons.ts";
import type { ObjectStatus } from "../../status/types.ts";
import { matchesSelector, selectorProblem } from "../common/label-selector.ts";
import { arrayOf, creationMillis, nameOf, namespaceOf, sourceRef } from "../common/objects.ts";
import { internalProblem } from "../common/problems.ts";
import { compareSourceAge } from "../common/sort.ts";
import { frontendValidation } from "./frontend-validation.ts";
import { type ListenerPlan, type Outcome, planListener } from "./listeners.ts";
import { entryKey, type GatewayEntry } from "./route-attachment.ts";
import { listenerStatus, outcomeCondition } from "./status.ts";

/** One ListenerSet naming a Gateway of ours, planned. */
export interface PlannedListenerSet {
  readonly listenerSet: ListenerSet;
  /** Its entry (route-attachment.ts), keyed by entryKey("ListenerSet", …). */
  readonly entry: GatewayEntry;
  /** The parent Gateway's entry key. */
  readonly parentKey: string;
  readonly accepted: Outcome;
  readonly programmed: Outcome;
}

export interface ListenerSetPlanContext {
  readonly secrets: ReadonlyMap<string, Secret>;
  readonly grants: readonly ReferenceGrant[];
  readonly nowMs: number | undefined;
  readonly labelsOf: (ns: string) => Readonly<Record<string, string>>;
}

/**
 * Plan every ListenerSet whose parentRef names a Gateway in `gateways` (others are not ours: no status).
 * `parentState` says whether each Gateway is accepted and programmed (a ListenerSet of a Gateway that is
 * not is not either: ParentNotAccepted, ParentNotProgrammed).
 */
export function planListenerSets(
  listenerSets: readonly ListenerSet[],
  gateways: ReadonlyMap<string, GatewayEntry>,
  parentState: (key: string) => { readonly accepted: boolean; readonly programmed: boolean },
  ctx: ListenerSetPlanContext,
  problems: Problem[],
): PlannedListenerSet[] {
  const ours = listenerSets
    .filter((ls) => ls?.metadata)
    .map((ls) => {
      const ref = ls.spec?.parentRef;
      const ns = ref?.namespace ?? namespaceOf(ls);
      const isGateway =
        (ref?.group ?? gatewayGroup) === gatewayGroup && (ref?.kind ?? "Gateway") === "Gateway";
      return { ls, parent: isGateway && ref ? gateways.get(entryKey("Gateway", ns, ref.name)) : undefined };
    })
    .filter((x): x is { ls: ListenerSet; parent: GatewayEntry } => x.parent !== undefined)
    .sort((a, b) => compareSourceAge(order(a.ls), order(b.ls)));
  // Per Gateway, the listeners merged so far: its own first, then each ListenerSet's valid ones.
  const merged = new Map<string, ListenerPlan[]>();
  const out: PlannedListenerSet[] = [];
  for (const { ls, parent } of ours) {
    try {
      const earlier = merged.get(parent.key) ?? parent.plans.filter(valid);
      merged.set(parent.key, earlier);
      const allowed = admitted(ls, parent, ctx.labelsOf);
      const plans = allowed ? planOwn(ls, parent, earlier, ctx) : [];
      earlier.push(...plans.filter(valid));
      const state = parentState(parent.key);
      const notAllowed: Outcome = {
        ok: false,
        reason: "NotAllowed",
        message: `Gateway ${parent.key} does not admit ListenerSets from namespace ${namespaceOf(ls)} (spec.allowedListeners)`,
      };
      const accepted: Outcome = !allowed
        ? notAllowed
        : !state.accepted
          ? { ok: false, reason: "ParentNotAccepted", message: `Gateway ${parent.key} is not accepted` }
          : plans.some(valid)
            ? { ok: true }
            : { ok: false, reason: GatewayReason.ListenersNotValid, message: invalidMessage(plans) };
      const programmed: Outcome = !accepted.ok
        ? accepted
        : !state.programmed
          ? { ok: false, reason: "ParentNotProgrammed", message: `Gateway ${parent.key} is not programmed` }
          : { ok: true };
      const entry: GatewayEntry = {
        gateway: parent.gateway,
        key: entryKey("ListenerSet", namespaceOf(ls), nameOf(ls)),
        listenerSet: { namespace: namespaceOf(ls), name: nameOf(ls) },
        plans,
        ...(!programmed.ok ? { notServing: { reason: programmed.reason, message: programmed.message } } : {}),
      };
      out.push({ listenerSet: ls, entry, parentKey: parent.key, accepted, programmed });
    } catch (err) {
      problems.push(internalProblem(sourceRef("ListenerSet", ls), err));
    }
  }
  return out;
}

/** The ListenerSet's status: its conditions and each listener's (attachedRoutes from `attached`). */
export function listenerSetStatus(
  p: PlannedListenerSet,
  attached: ReadonlyMap<string, ReadonlySet<string>>,
): ObjectStatus {
  const gen = generationOf(p.listenerSet);
  return {
    target: {
      group: gatewayGroup,
      kind: "ListenerSet",
      namespace: namespaceOf(p.listenerSet),
      name: nameOf(p.listenerSet),
    },
    ...(gen !== undefined ? { generation: gen } : {}),
    status: {
      conditions: [
        outcomeCondition(ConditionType.Accepted, p.accepted, "Accepted", "listener set accepted", gen),
        outcomeCondition(
          ConditionType.Programmed,
          p.programmed,
          "Programmed",
          "listener set programmed",
          gen,
        ),
      ],
      listeners: p.entry.plans.map((plan) =>
        listenerStatus(plan, attached.get(`${p.entry.key}/${plan.name}`)?.size ?? 0, gen, true),
      ),
    },
  };
}

function order(ls: ListenerSet) {
  return { namespace: namespaceOf(ls), name: nameOf(ls), createdMs: creationMillis(ls) };
}

/** A listener that serves: accepted, in no conflict, its references resolved. */
function valid(p: ListenerPlan): boolean {
  return p.accepted.ok && !p.conflict && p.resolvedRefs.ok;
}

function invalidMessage(plans: readonly ListenerPlan[]): string {
  return plans.length === 0
    ? "the listener set has no listeners"
    : `listeners not valid: ${plans.map((p) => p.name).join(", ")}`;
}

/** Whether the Gateway's `spec.allowedListeners.namespaces` admits the ListenerSet's namespace. */
function admitted(
  ls: ListenerSet,
  parent: GatewayEntry,
  labelsOf: (ns: string) => Readonly<Record<string, string>>,
): boolean {
  const ns = parent.gateway.spec?.allowedListeners?.namespaces;
  switch (ns?.from ?? "None") {
    case "All":
      return true;
    case "Same":
      return namespaceOf(ls) === namespaceOf(parent.gateway);
    case "Selector":
      return (
        ns?.selector !== undefined &&
        selectorProblem(ns.selector) === undefined &&
        matchesSelector(ns.selector, labelsOf(namespaceOf(ls)))
      );
    default:
      return false;
  }
}

/** The ListenerSet's listeners validated, then refused where they clash with an earlier listener. */
function planOwn(
  ls: ListenerSet,
  parent: GatewayEntry,
  earlier: readonly ListenerPlan[],
  ctx: ListenerSetPlanContext,
): ListenerPlan[] {
  const namespace = namespaceOf(ls);
  const seen = new Set<string>();
  const own: ListenerPlan[] = [];
  for (const l of arrayOf(ls.spec?.listeners).slice(0, 64)) {
    if (seen.has(l.name)) continue;
    seen.add(l.name);
    const frontend = frontendValidation(parent.gateway, l.port, {
      configMaps: new Map(),
      unreadable: [],
      secrets: ctx.secrets,
      grants: ctx.grants,
    });
    own.push(planListener(l, { ...ctx, namespace, fromKind: "ListenerSet", frontend }));
  }
  // In precedence order, each listener against those before it (the Gateway's, earlier ListenerSets',
  // and this set's own earlier valid ones): the later one of a clashing pair is refused.
  const before = [...earlier];
  return own.map((p) => {
    const clash = p.accepted.ok ? clashWith(p, before) : undefined;
    if (clash) return { ...p, conflict: clash };
    if (valid(p)) before.push(p);
    return p;
  });
}

/** The conflict `p` has with a listener that takes precedence over it, if any. */
function clashWith(
  p: ListenerPlan,
  earlier: readonly ListenerPlan[],
): { reason: string; message: string } | undefined {
  for (const e of earlier) {
    if (e.port !== p.port) continue;
    if (e.protocol !== p.protocol)
      return {
        reason: ListenerReason.ProtocolConflict,
        message: `port ${p.port} is used with protocol ${e.protocol} by listener ${e.name}, which takes precedence`,
      };
    if ((e.hostname?.hostname ?? "") === (p.hostname?.hostname ?? ""))
      return {
        reason: ListenerReason.HostnameConflict,
        message: `listener ${e.name} takes precedence on port ${p.port} with ${p.hostname ? `hostname "${p.hostname.hostname}"` : "no hostname"}`,
      };
  }
  return undefined;
}
