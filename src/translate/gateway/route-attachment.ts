import type { SourceRef } from "../../model/index.ts";
import type { Gateway, ParentReference } from "../../sources/schema/gateway.ts";
import { gatewayGroup, RouteReason } from "../../status/reasons.ts";
import type { HostPattern } from "../common/host-patterns.ts";
import { matchesSelector, selectorProblem } from "../common/label-selector.ts";
import { arrayOf, namespaceOf } from "../common/objects.ts";
import { intersectHostnames } from "./gateway-hostnames.ts";
import {
  type AttachedKind,
  allowsKind,
  type ListenerPlan,
  notServingWhy,
  type Outcome,
} from "./listeners.ts";

/** What attachment reads of a translated route (HTTPRouteTranslation, TLSRouteTranslation). */
export interface AttachableRoute {
  readonly route: { readonly spec?: { readonly parentRefs?: readonly ParentReference[] } };
  readonly ref: SourceRef;
  /** Its hostnames; empty means any host. */
  readonly hostnames: readonly HostPattern[];
  /** Set when the route cannot be accepted at all. */
  readonly invalid?: { readonly reason: string; readonly message: string };
}

/** A Gateway of ours with its validated listeners, or a ListenerSet attached to one (`listenerSet`). */
export interface GatewayEntry {
  /** The Gateway, or for a ListenerSet its parent (whose address its listeners bind). */
  readonly gateway: Gateway;
  /** `<ns>/<name>`; `ListenerSet/<ns>/<name>` for a ListenerSet (entryKey). */
  readonly key: string;
  /** Set for a ListenerSet: routes name it in parentRefs of kind ListenerSet, and "Same" means its namespace. */
  readonly listenerSet?: { readonly namespace: string; readonly name: string };
  readonly plans: readonly ListenerPlan[];
  /** Set when the Gateway as a whole serves nothing (not accepted, or not programmed). */
  readonly notServing?: { readonly reason: string; readonly message: string };
}

/** A listener a route attached to, and the virtual host names it gets there (hostname intersections). */
export interface Attachment {
  readonly plan: ListenerPlan;
  readonly hosts: readonly HostPattern[];
}

/** The outcome for one parentRef naming a Gateway of ours: its RouteParentStatus in the making. */
export interface ParentResult {
  /** The parentRef as the status echoes it: group and kind explicit, namespace when given or different. */
  readonly parentRef: Readonly<Record<string, string | number>>;
  readonly gatewayKey: string;
  readonly accepted: Outcome;
  /** Listeners the route is attached to (empty unless accepted). */
  readonly attachments: readonly Attachment[];
  /** Set when accepted but some attached listener (or the Gateway) serves nothing: why, for the status. */
  readonly notServing?: { readonly reason: string; readonly message: string };
}

/**
 * Attach a route to the Gateways its parentRefs name. Refs to other kinds, or to Gateways that are not
 * ours (other controllers' or missing), get no entry: their status is someone else's. For each ref the
 * candidate listeners are those matching `sectionName` and `port` (NoMatchingParent when none); of
 * those, the ones serving routes of `kind` whose allowedRoutes admit the route's namespace
 * (NotAllowedByListeners when none); of those, the ones whose hostname intersects the route's
 * (NoMatchingListenerHostname when none). A route that is invalid in itself is refused with its own
 * reason once a listener would have taken it. Repeated identical parentRefs count once.
 * Listener status plays no part: "Listener or Route status does not impact successful attachment"
 * (ListenerStatus.attachedRoutes, v1.6.1), so a route attaches to a refused or conflicted listener too
 * and stays Accepted; `notServing` then says that listener serves nothing.
 */
export function attachRoute(
  t: AttachableRoute,
  gateways: ReadonlyMap<string, GatewayEntry>,
  labelsOf: (ns: string) => Readonly<Record<string, string>>,
  kind: AttachedKind = "HTTPRoute",
): ParentResult[] {
  const results: ParentResult[] = [];
  const seen = new Set<string>();
  for (const ref of arrayOf(t.route.spec?.parentRefs)) {
    const parentKind = ref.kind ?? "Gateway";
    if ((ref.group ?? gatewayGroup) !== gatewayGroup) continue;
    if (parentKind !== "Gateway" && parentKind !== "ListenerSet") continue;
    const namespace = ref.namespace ?? t.ref.namespace;
    const entry = gateways.get(entryKey(parentKind, namespace, ref.name));
    if (!entry) continue;
    const parentRef = {
      group: gatewayGroup,
      kind: parentKind,
      ...(ref.namespace !== undefined || namespace !== t.ref.namespace ? { namespace } : {}),
      name: ref.name,
      ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
      ...(ref.port !== undefined ? { port: ref.port } : {}),
    };
    const key = JSON.stringify([parentKind, namespace, ref.name, ref.sectionName ?? null, ref.port ?? null]);
    if (seen.has(key)) continue;
    seen.add(key);
    const { accepted, attachments } = attachToGateway(t, entry, ref, labelsOf, kind);
    const notServing = accepted.ok ? notServingOf(entry, attachments) : undefined;
    results.push({
      parentRef,
      gatewayKey: entry.key,
      accepted,
      attachments,
      ...(notServing ? { notServing } : {}),
    });
  }
  return results;
}

/** The key of a parent in the entries map: a Gateway's and a ListenerSet's never meet. */
export function entryKey(kind: "Gateway" | "ListenerSet", namespace: string, name: string): string {
  return kind === "Gateway" ? `${namespace}/${name}` : `ListenerSet/${namespace}/${name}`;
}

/** How messages name a parent. */
function parentName(entry: GatewayEntry): string {
  return entry.listenerSet
    ? `ListenerSet ${entry.listenerSet.namespace}/${entry.listenerSet.name}`
    : `Gateway ${entry.key}`;
}

function attachToGateway(
  t: AttachableRoute,
  entry: GatewayEntry,
  ref: { sectionName?: string; port?: number },
  labelsOf: (ns: string) => Readonly<Record<string, string>>,
  kind: AttachedKind,
): { accepted: Outcome; attachments: Attachment[] } {
  const refused = (reason: string, message: string) => ({
    accepted: { ok: false, reason, message } as Outcome,
    attachments: [],
  });
  const candidates = entry.plans.filter(
    (p) =>
      (ref.sectionName === undefined || p.name === ref.sectionName) &&
      (ref.port === undefined || p.port === ref.port),
  );
  if (candidates.length === 0) {
    const which = [
      ref.sectionName !== undefined ? `sectionName "${ref.sectionName}"` : "",
      ref.port !== undefined ? `port ${ref.port}` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    return refused(
      RouteReason.NoMatchingParent,
      `${parentName(entry)} has no listener with ${which || "any name"}`,
    );
  }
  // "Same" is the namespace of the object the listener belongs to: a ListenerSet's own for its listeners.
  const gwNamespace = entry.listenerSet?.namespace ?? namespaceOf(entry.gateway);
  const allowed = candidates.filter(
    (p) => allowsKind(p, kind) && admitsNamespace(p, gwNamespace, t.ref.namespace, labelsOf),
  );
  if (allowed.length === 0) {
    const kindOk = candidates.some((p) => allowsKind(p, kind));
    const why = kindOk ? `allows ${kind}s from namespace ${t.ref.namespace}` : `allows the kind ${kind}`;
    return refused(RouteReason.NotAllowedByListeners, `no listener of ${parentName(entry)} ${why}`);
  }
  const attachments: Attachment[] = [];
  for (const plan of allowed) {
    // A hostname the listener was refused for matches nothing: which names it meant is unknown.
    if (plan.spec.hostname !== undefined && plan.hostname === undefined) continue;
    const hosts =
      t.hostnames.length === 0
        ? [intersectHostnames(plan.hostname, undefined)]
        : t.hostnames.map((h) => intersectHostnames(plan.hostname, h));
    const valid = hosts.filter((h): h is HostPattern => h !== undefined);
    const distinct = valid.filter((h, i) => valid.findIndex((x) => x.hostname === h.hostname) === i);
    if (distinct.length > 0) attachments.push({ plan, hosts: distinct });
  }
  if (attachments.length === 0) {
    return refused(
      RouteReason.NoMatchingListenerHostname,
      `no hostname of the route matches a listener hostname of ${parentName(entry)}`,
    );
  }
  if (t.invalid) return refused(t.invalid.reason, t.invalid.message);
  return { accepted: { ok: true }, attachments };
}

/** Why some of an accepted parent's attachments serve nothing; undefined when all of them serve. */
function notServingOf(
  entry: GatewayEntry,
  attachments: readonly Attachment[],
): { reason: string; message: string } | undefined {
  if (entry.notServing)
    return {
      reason: entry.notServing.reason,
      message: `${parentName(entry)} serves nothing (${entry.notServing.message}); the route is attached but not served through it`,
    };
  const idle = attachments.flatMap((a) => {
    const why = notServingWhy(a.plan);
    return why ? [{ name: a.plan.name, ...why }] : [];
  });
  const first = idle[0];
  if (!first) return undefined;
  const listed = idle.map((i) => `"${i.name}" (${i.reason})`).join(", ");
  const none = idle.length === attachments.length ? "; no listener of this parent serves the route" : "";
  return {
    reason: first.reason,
    message: `attached to but not served by listener(s) ${listed} of ${parentName(entry)} (see its listener status)${none}`,
  };
}

/**
 * Whether the listener's allowedRoutes.namespaces admit routes of `routeNamespace`. A `from` or selector
 * the listener was refused for admits none: what it meant cannot be known.
 */
function admitsNamespace(
  p: ListenerPlan,
  gatewayNamespace: string,
  routeNamespace: string,
  labelsOf: (ns: string) => Readonly<Record<string, string>>,
): boolean {
  const ns = p.spec.allowedRoutes?.namespaces;
  switch (ns?.from ?? "Same") {
    case "All":
      return true;
    case "Selector":
      return (
        ns?.selector !== undefined &&
        selectorProblem(ns.selector) === undefined &&
        matchesSelector(ns.selector, labelsOf(routeNamespace))
      );
    case "Same":
      return routeNamespace === gatewayNamespace;
    default:
      return false;
  }
}
