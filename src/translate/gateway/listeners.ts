import type { ListenerTLS } from "../../model/index.ts";
import type { Secret } from "../../sources/schema/core.ts";
import type { Gateway, GatewayListener, ReferenceGrant } from "../../sources/schema/gateway.ts";
import { gatewayGroup, ListenerReason } from "../../status/reasons.ts";
import type { HostPattern } from "../common/host-patterns.ts";
import { selectorProblem } from "../common/label-selector.ts";
import { arrayOf, namespaceOf } from "../common/objects.ts";
import { type CASources, type FrontendValidation, frontendValidation } from "./frontend-validation.ts";
import { intersectHostnames, parseGatewayHostname } from "./gateway-hostnames.ts";
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
const grpcRouteKind: RouteKind = { group: gatewayGroup, kind: "GRPCRoute" };
const tlsRouteKind: RouteKind = { group: gatewayGroup, kind: "TLSRoute" };
const tcpRouteKind: RouteKind = { group: gatewayGroup, kind: "TCPRoute" };
const udpRouteKind: RouteKind = { group: gatewayGroup, kind: "UDPRoute" };

/** The route kinds Gatehouse attaches, each to the listener protocol that serves it. */
export type AttachedKind = "HTTPRoute" | "GRPCRoute" | "TLSRoute" | "TCPRoute" | "UDPRoute";

/** The route kinds a listener protocol serves (empty: a protocol Gatehouse does not serve). */
function servedKinds(protocol: string): readonly RouteKind[] {
  if (protocol === "HTTP" || protocol === "HTTPS") return [httpRouteKind, grpcRouteKind];
  if (protocol === "TLS") return [tlsRouteKind];
  if (protocol === "TCP") return [tcpRouteKind];
  if (protocol === "UDP") return [udpRouteKind];
  return [];
}
/** At most this many listeners per Gateway (CRD MaxItems). */
export const maxListeners = 64;

/** One Gateway listener, validated: what its status says and what the model will serve. */
export interface ListenerPlan {
  readonly name: string;
  readonly spec: GatewayListener;
  readonly port: number;
  readonly protocol: "HTTP" | "HTTPS" | "TLS" | "TCP" | "UDP" | string;
  readonly hostname?: HostPattern;
  readonly supportedKinds: readonly RouteKind[];
  readonly accepted: Outcome;
  readonly resolvedRefs: Outcome;
  /** Set when the listener clashes with another of its Gateway (Conflicted True). */
  readonly conflict?: { readonly reason: string; readonly message: string };
  /** Set when an HTTPS listener's hostname overlaps another's on the same port (OverlappingTLSConfig). */
  readonly overlap?: { readonly reason: string; readonly message: string };
  /** Certificates of an HTTPS listener that resolved. */
  readonly tls?: ListenerTLS;
}

/**
 * Whether a plan gets a model listener: accepted, not conflicted, and HTTPS only with a certificate.
 * A TLS listener in Passthrough mode needs no certificate, in Terminate mode it does; TCP and UDP have none.
 */
export function isProgrammed(p: ListenerPlan): boolean {
  return (
    p.accepted.ok &&
    !p.conflict &&
    (p.protocol === "HTTP" ||
      (p.protocol === "TLS" && !terminatesTLS(p.spec)) ||
      p.protocol === "TCP" ||
      p.protocol === "UDP" ||
      (p.tls?.certificates.length ?? 0) > 0)
  );
}

/**
 * Why a listener gets no model listener (undefined when it is programmed), with the reason of the
 * listener condition that says so: for the routes attached to it, which are accepted all the same.
 */
export function notServingWhy(p: ListenerPlan): { reason: string; message: string } | undefined {
  if (!p.accepted.ok) return { reason: p.accepted.reason, message: p.accepted.message };
  if (p.conflict) return p.conflict;
  if (isProgrammed(p)) return undefined;
  return p.resolvedRefs.ok
    ? { reason: ListenerReason.Invalid, message: "no certificate could be resolved" }
    : { reason: p.resolvedRefs.reason, message: p.resolvedRefs.message };
}

/** Whether routes of `kind` may attach: the protocol serves them and allowedRoutes.kinds lets them in. */
export function allowsKind(p: ListenerPlan, kind: AttachedKind): boolean {
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
  caSources: Omit<CASources, "secrets" | "grants"> = { configMaps: new Map(), unreadable: [] },
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
    const frontend = frontendValidation(gateway, l.port, { ...caSources, secrets, grants });
    plans.push(planListener(l, { namespace, secrets, grants, nowMs, frontend }));
  }
  return {
    plans: markOverlaps(markConflicts(plans)),
    duplicates,
    overLimit: Math.max(0, all.length - maxListeners),
  };
}

export interface PlanContext {
  /** The namespace of the Gateway or ListenerSet the listener belongs to. */
  readonly namespace: string;
  /** Which of the two it is (ReferenceGrants name it in `from`); Gateway when absent. */
  readonly fromKind?: "Gateway" | "ListenerSet";
  readonly secrets: ReadonlyMap<string, Secret>;
  readonly grants: readonly ReferenceGrant[];
  readonly nowMs: number | undefined;
  /** Client-certificate validation (Gateway `spec.tls.frontend`) of HTTPS listeners on this port. */
  readonly frontend: FrontendValidation | undefined;
}

export function planListener(l: GatewayListener, ctx: PlanContext): ListenerPlan {
  const { namespace, secrets, grants, nowMs } = ctx;
  const served = servedKinds(l.protocol);
  const supported = served.length > 0;
  const base = { name: l.name, spec: l, port: l.port, protocol: l.protocol };
  const kinds = routeKinds(l, served);
  const fail = (reason: string, message: string): Outcome => ({ ok: false, reason, message });
  let accepted: Outcome = ok;
  // Parsed whatever else is wrong: a refused listener still takes routes by hostname (see attachRoute).
  const parsedHost = l.hostname !== undefined ? parseGatewayHostname(l.hostname) : undefined;
  const hostname: HostPattern | undefined = parsedHost?.ok ? parsedHost.host : undefined;
  const selector = l.allowedRoutes?.namespaces?.selector;
  const from = l.allowedRoutes?.namespaces?.from ?? "Same";
  if (!supported)
    accepted = fail(
      ListenerReason.UnsupportedProtocol,
      `protocol "${l.protocol}" is not supported; use HTTP, HTTPS, TLS, TCP or UDP`,
    );
  else if (!Number.isInteger(l.port) || l.port < 1 || l.port > 65535)
    accepted = fail(ListenerReason.PortUnavailable, `port ${l.port} is not within 1–65535`);
  else if ((l.protocol === "HTTP" || l.protocol === "TCP" || l.protocol === "UDP") && l.tls)
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `tls must not be set on ${l.protocol === "HTTP" ? "an HTTP" : `a ${l.protocol}`} listener`,
    );
  else if (l.protocol === "TLS" && l.tls === undefined)
    accepted = fail(ListenerReason.UnsupportedValue, "tls is required on a TLS listener");
  else if (l.protocol === "TLS" && !["Passthrough", "Terminate"].includes(l.tls?.mode ?? "Terminate")) {
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `tls.mode "${l.tls?.mode}" is not Passthrough or Terminate`,
    );
  } else if (terminatesTLS(l) && l.protocol === "TLS" && ctx.frontend?.validation !== undefined) {
    // Client certificates are checked by the HTTPS listeners' TLS servers only: never open, so refused.
    accepted = fail(
      ListenerReason.UnsupportedValue,
      "spec.tls.frontend client certificate validation is not supported on TLS Terminate listeners",
    );
  } else if (l.protocol === "HTTPS" && (l.tls?.mode ?? "Terminate") !== "Terminate") {
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `tls.mode "${l.tls?.mode}" is not supported on HTTPS; only Terminate`,
    );
  } else if (tlsOptionKeys(l).length > 0) {
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `tls.options: no TLS option is supported (${tlsOptionKeys(l).join(", ")})`,
    );
  } else if (l.protocol === "HTTPS" && ctx.frontend?.refusal !== undefined) {
    accepted = fail(ctx.frontend.refusal.reason, ctx.frontend.refusal.message);
  } else if (!["All", "Same", "Selector"].includes(from)) {
    accepted = fail(
      ListenerReason.UnsupportedValue,
      `allowedRoutes.namespaces.from "${from}" is not All, Same or Selector`,
    );
  } else if (from === "Selector" && (!selector || selectorProblem(selector))) {
    const why = selector ? selectorProblem(selector) : "a selector is required";
    accepted = fail(ListenerReason.UnsupportedValue, `allowedRoutes.namespaces.selector: ${why}`);
  } else if (parsedHost !== undefined && !parsedHost.ok) {
    accepted = fail(ListenerReason.UnsupportedValue, `hostname "${l.hostname}": ${parsedHost.message}`);
  }
  let resolvedRefs: Outcome =
    kinds.invalid.length > 0
      ? fail(
          ListenerReason.InvalidRouteKinds,
          `allowedRoutes.kinds: ${kinds.invalid.join(", ")} not supported; supported: ${served.map((k) => k.kind).join(", ") || "none"}`,
        )
      : ok;
  const caFailure = l.protocol === "HTTPS" ? ctx.frontend?.failure : undefined;
  if (caFailure && resolvedRefs.ok) resolvedRefs = fail(caFailure.reason, caFailure.message);
  let tls: ListenerTLS | undefined;
  if (supported && terminatesTLS(l) && accepted.ok) {
    const certs = resolveCertificates(l, namespace, secrets, grants, nowMs, ctx.fromKind);
    if (certs.failure && resolvedRefs.ok) resolvedRefs = fail(certs.failure.reason, certs.failure.message);
    const clientValidation = l.protocol === "HTTPS" ? ctx.frontend?.validation : undefined;
    tls = { certificates: certs.certificates, ...(clientValidation ? { clientValidation } : {}) };
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
 * allowedRoutes.kinds split into what the protocol serves (`served`: HTTPRoute and GRPCRoute on
 * HTTP/HTTPS, TLSRoute on TLS, TCPRoute on TCP, UDPRoute on UDP; none for a protocol we do not serve) and
 * what we refuse. A kind given twice counts once.
 */
function routeKinds(
  l: GatewayListener,
  served: readonly RouteKind[],
): { valid: RouteKind[]; invalid: string[] } {
  const given = l.allowedRoutes?.kinds;
  if (given === undefined) return { valid: [...served], invalid: [] };
  const valid: RouteKind[] = [];
  const invalid: string[] = [];
  for (const k of given) {
    const group = k.group ?? gatewayGroup;
    const kind = served.find((s) => s.group === group && s.kind === k.kind);
    if (kind === undefined) invalid.push(`${group}/${k.kind}`);
    else if (!valid.includes(kind)) valid.push(kind);
  }
  return { valid, invalid };
}

/** HTTPS, and TLS in mode Terminate (the default): the listener holds the certificates and terminates. */
export function terminatesTLS(l: GatewayListener): boolean {
  return l.protocol === "HTTPS" || (l.protocol === "TLS" && (l.tls?.mode ?? "Terminate") === "Terminate");
}

/** The keys of a listener's `tls.options` (implementation-specific; Gatehouse has none). */
function tlsOptionKeys(l: GatewayListener): string[] {
  const options = l.tls?.options;
  return options && typeof options === "object" ? Object.keys(options).sort() : [];
}

/**
 * OverlappingTLSConfig (reason OverlappingHostnames) on every accepted HTTPS listener whose hostname
 * overlaps another's on the same port: equal, one under the other's wildcard, or either without a
 * hostname. The spec: controllers "MUST detect the presence of overlapping hostnames" and the condition
 * "MUST be set on all Listeners with overlapping TLS config". A listener whose hostname did not parse
 * is not accepted and takes no part.
 */
function markOverlaps(plans: ListenerPlan[]): ListenerPlan[] {
  const https = plans.filter((p) => p.protocol === "HTTPS" && p.accepted.ok);
  const label = (p: ListenerPlan) =>
    `"${p.name}" (${p.hostname ? `hostname "${p.hostname.hostname}"` : "no hostname"})`;
  return plans.map((p) => {
    if (!https.includes(p)) return p;
    const others = https.filter(
      (o) => o !== p && o.port === p.port && intersectHostnames(o.hostname, p.hostname) !== undefined,
    );
    if (others.length === 0) return p;
    const message = `listener ${label(p)} overlaps on port ${p.port} with ${others.map(label).join(", ")}; an HTTP/2 client reusing one connection for names of both is answered 421 Misdirected Request`;
    return { ...p, overlap: { reason: ListenerReason.OverlappingHostnames, message } };
  });
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
