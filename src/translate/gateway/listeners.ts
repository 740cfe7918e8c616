import type { ListenerTLS } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import type { Gateway, GatewayListener, ReferenceGrant } from "../../sources/schema/gateway.ts";
import { gatewayGroup, ListenerReason } from "../../status/reasons.ts";
import type { HostPattern } from "../common/host-patterns.ts";
import { selectorProblem } from "../common/label-selector.ts";
import { arrayOf, namespaceOf } from "../common/objects.ts";
import { parseGatewayHostname } from "./gateway-hostnames.ts";
import { resolveCertificates } from "./listener-tls.ts";

export interface RouteKind {
  readonly group: string;
  readonly kind: string;
}

/** A condition outcome: true, or false with a reason and message. */
export type Outcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly message: string };

const ok: Outcome = { ok: true };
const httpRouteKind: RouteKind = { group: gatewayGroup, kind: "HTTPRoute" };
const tlsRouteKind: RouteKind = { group: gatewayGroup, kind: "TLSRoute" };
/** At most this many listeners per Gateway (CRD MaxItems). */
export const maxListeners = 64;

/** One Gateway listener, validated: what its status says and what the model will serve. */
export interface ListenerPlan {
  readonly name: string;
  readonly spec: GatewayListener;
  readonly port: number;
  readonly protocol: "HTTP" | "HTTPS" | "TLS" | string;
  readonly hostname?: HostPattern;
  readonly supportedKinds: readonly RouteKind[];
  readonly accepted: Outcome;
  readonly resolvedRefs: Outcome;
  /** Set when the listener clashes with another of its Gateway (Conflicted True). */
  readonly conflict?: { readonly reason: string; readonly message: string };
  /** Certificates of an HTTPS listener that resolved. */
  readonly tls?: ListenerTLS;
}

/**
 * Whether a plan gets a model listener: accepted, not conflicted, and HTTPS only with a certificate.
 * A TLS listener is only ever accepted in Passthrough mode, which needs no certificate.
 */
export function isProgrammed(p: ListenerPlan): boolean {
  return (
    p.accepted.ok &&
    !p.conflict &&
    (p.protocol === "HTTP" || p.protocol === "TLS" || (p.tls?.certificates.length ?? 0) > 0)
  );
}

/** Whether routes of `kind` may attach: the protocol serves them and allowedRoutes.kinds lets them in. */
export function allowsKind(p: ListenerPlan, kind: "HTTPRoute" | "TLSRoute"): boolean {
  return p.supportedKinds.some((k) => k.group === gatewayGroup && k.kind === kind);
}

/**
 * Validate a Gateway's listeners. A listener whose name repeats an earlier one is left out (listener
 * names key the status) and listed in `duplicates`. Listeners beyond the 64th are left out likewise.
 * Then listeners sharing a port conflict: different protocols → ProtocolConflict for all of them; the
 * same hostname (or both none) → HostnameConflict for those.
 */
export function planListeners(
  gateway: Gateway,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  nowMs?: number,
): { plans: ListenerPlan[]; duplicates: string[]; overLimit: number } {
  const namespace = namespaceOf(gateway);
  const seen = new Set<string>();
  const plans: ListenerPlan[] = [];
  const duplicates: string[] = [];
  const all = arrayOf(gateway.spec?.listeners);
  for (const l of all.slice(0, maxListeners)) {
    if (seen.has(l.name)) {
      duplicates.push(l.name);
      continue;
    }
    seen.add(l.name);
    plans.push(planListener(l, namespace, secrets, grants, nowMs));
  }
  return { plans: markConflicts(plans), duplicates, overLimit: Math.max(0, all.length - maxListeners) };
}

function planListener(
  l: GatewayListener,
  namespace: string,
  secrets: ReadonlyMap<string, Secret>,
  grants: readonly ReferenceGrant[],
  nowMs: number | undefined,
): ListenerPlan {
  const supported = l.protocol === "HTTP" || l.protocol === "HTTPS" || l.protocol === "TLS";
  const base = { name: l.name, spec: l, port: l.port, protocol: l.protocol };
  const kinds = routeKinds(l, supported ? (l.protocol === "TLS" ? tlsRouteKind : httpRouteKind) : undefined);
  const fail = (reason: string, message: string): Outcome => ({ ok: false, reason, message });
  let accepted: Outcome = ok;
  let hostname: HostPattern | undefined;
  const selector = l.allowedRoutes?.namespaces?.selector;
  const from = l.allowedRoutes?.namespaces?.from ?? "Same";
  if (!supported)
    accepted = fail(
      ListenerReason.UnsupportedProtocol,
      `protocol "${l.protocol}" is not supported; use HTTP or HTTPS`,
    );
  else if (!Number.isInteger(l.port) || l.port < 1 || l.port > 65535)
    accepted = fail(ListenerReason.PortUnavailable, `port ${l.port} is not within 1–65535`);
  else if (l.protocol === "HTTP" && l.tls)
    accepted = fail(ListenerReason.UnsupportedValue, "tls must not be set on an HTTP listener");
  else if (l.protocol === "TLS" && l.tls === undefined)
    accepted = fail(ListenerReason.UnsupportedValue, "tls is required on a TLS listener");
  else if (l.protocol === "TLS" && (l.tls?.mode ?? "Terminate") !== "Passthrough") {
    // Terminating TLS and forwarding the plaintext stream (TLSRoute mode Terminate) is not built yet.
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `tls.mode "${l.tls?.mode ?? "Terminate"}" is not supported on TLS; only Passthrough`,
    );
  } else if (l.protocol === "HTTPS" && (l.tls?.mode ?? "Terminate") !== "Terminate") {
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `tls.mode "${l.tls?.mode}" is not supported on HTTPS; only Terminate`,
    );
  } else if (!["All", "Same", "Selector"].includes(from)) {
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `allowedRoutes.namespaces.from "${from}" is not All, Same or Selector`,
    );
  } else if (from === "Selector" && (!selector || selectorProblem(selector))) {
    const why = selector ? selectorProblem(selector) : "a selector is required";
    accepted = fail(ListenerReason.UnsupportedValue, `allowedRoutes.namespaces.selector: ${why}`);
  } else if (l.hostname !== undefined) {
    const parsed = parseGatewayHostname(l.hostname);
    if (parsed.ok) hostname = parsed.host;
    else accepted = fail(ListenerReason.UnsupportedValue, `hostname "${l.hostname}": ${parsed.message}`);
  }
  let resolvedRefs: Outcome =
    kinds.invalid.length > 0
      ? fail(
          ListenerReason.InvalidRouteKinds,
          `allowedRoutes.kinds: ${kinds.invalid.join(", ")} not supported; supported: ${l.protocol === "TLS" ? "TLSRoute" : "HTTPRoute"}`,
        )
      : ok;
  let tls: ListenerTLS | undefined;
  if (supported && l.protocol === "HTTPS" && accepted.ok) {
    const certs = resolveCertificates(l, namespace, secrets, grants, nowMs);
    if (certs.failure && resolvedRefs.ok) resolvedRefs = fail(certs.failure.reason, certs.failure.message);
    tls = { certificates: certs.certificates };
  }
  return {
    ...base,
    ...(hostname ? { hostname } : {}),
    supportedKinds: kinds.valid,
    accepted,
    resolvedRefs,
    ...(tls ? { tls } : {}),
  };
}

/**
 * allowedRoutes.kinds split into what the protocol serves (`served`: HTTPRoute on HTTP/HTTPS, TLSRoute
 * on TLS; undefined for a protocol we do not serve) and what we refuse.
 */
function routeKinds(
  l: GatewayListener,
  served: RouteKind | undefined,
): { valid: RouteKind[]; invalid: string[] } {
  const given = l.allowedRoutes?.kinds;
  if (given === undefined) return { valid: served ? [served] : [], invalid: [] };
  const valid: RouteKind[] = [];
  const invalid: string[] = [];
  for (const k of given) {
    const group = k.group ?? gatewayGroup;
    if (served && group === served.group && k.kind === served.kind) {
      if (valid.length === 0) valid.push(served);
    } else invalid.push(`${group}/${k.kind}`);
  }
  return { valid, invalid };
}

function markConflicts(plans: ListenerPlan[]): ListenerPlan[] {
  const byPort = new Map<number, ListenerPlan[]>();
  for (const p of plans) {
    if (!p.accepted.ok) continue;
    byPort.set(p.port, [...(byPort.get(p.port) ?? []), p]);
  }
  const conflicts = new Map<ListenerPlan, { reason: string; message: string }>();
  for (const [port, group] of byPort) {
    const protocols = new Set(group.map((p) => p.protocol));
    if (protocols.size > 1) {
      const message = `port ${port} is used with protocols ${[...protocols].sort().join(" and ")} by listeners ${group.map((p) => p.name).join(", ")}`;
      for (const p of group) conflicts.set(p, { reason: ListenerReason.ProtocolConflict, message });
      continue;
    }
    const byHost = new Map<string, ListenerPlan[]>();
    for (const p of group)
      byHost.set(p.hostname?.hostname ?? "", [...(byHost.get(p.hostname?.hostname ?? "") ?? []), p]);
    for (const [host, same] of byHost) {
      if (same.length < 2) continue;
      const what = host ? `hostname "${host}"` : "no hostname";
      const message = `listeners ${same.map((p) => p.name).join(", ")} share port ${port} and ${what}`;
      for (const p of same) conflicts.set(p, { reason: ListenerReason.HostnameConflict, message });
    }
  }
  return plans.map((p) => {
    const c = conflicts.get(p);
    return c ? { ...p, conflict: c } : p;
  });
}
