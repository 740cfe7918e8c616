import type { Backend, Filter, WeightedBackend } from "../../../model/index.ts";
import type { ReferenceGrant } from "../../../sources/schema/gateway.ts";
import { gatewayGroup, RouteReason, type RouteRefFailure } from "../../../status/reasons.ts";
import { lookupServiceBackend } from "../../common/backends.ts";
import { backendId } from "../../common/names.ts";
import { referenceAllowed } from "../../common/reference-grants.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import { policiesForPort } from "../backend-tls/targets.ts";

/** What resolving backend references needs: the snapshot and the referring route. */
export interface BackendContext {
  readonly index: SnapshotIndex;
  readonly grants: readonly ReferenceGrant[];
  /** Namespace of the HTTPRoute; references default to it. */
  readonly namespace: string;
  /** Kind of the referring route, as ReferenceGrants name it in `from`; HTTPRoute when absent. */
  readonly routeKind?: "HTTPRoute" | "GRPCRoute" | "TLSRoute" | "TCPRoute" | "UDPRoute";
}

/** A reference the route could not resolve, for its ResolvedRefs condition. */
export interface RefIssue {
  readonly reason: RouteRefFailure;
  readonly message: string;
}

export interface ResolvedRef {
  /** Present when the reference is valid: the Service port's Backend, to put in the model. */
  readonly backend?: Backend;
  /** `ns/name:port` of the reference, valid or not. */
  readonly id: string;
  readonly issue?: RefIssue;
}

interface BackendObjectRef {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
  readonly port?: number;
}

/** appProtocols (compared in lower case) that are HTTP or WebSocket over TLS: served only as a BackendTLSPolicy says. */
const tlsAppProtocols = new Set(["https", "kubernetes.io/wss"]);
/** appProtocols we cannot speak to a backend of an HTTPRoute or GRPCRoute at all. */
const unsupportedAppProtocols = new Set(["kubernetes.io/tls", "tls"]);

/**
 * Resolve a BackendObjectReference (backendRefs, RequestMirror) to a Service port, in this order of
 * failure: kind other than core Service → InvalidKind; cross-namespace without a ReferenceGrant →
 * RefNotPermitted (checked before existence, so a grant-less route learns nothing about the other
 * namespace); no port, no Service, no such port or an ExternalName Service → BackendNotFound;
 * appProtocol `https` or `kubernetes.io/wss` with no BackendTLSPolicy on the port (nothing says how to
 * verify the backend, and it is never spoken to in cleartext), or raw `tls` → UnsupportedProtocol. A
 * Service without ready endpoints is valid (503).
 */
export function resolveBackendRef(ref: BackendObjectRef, field: string, ctx: BackendContext): ResolvedRef {
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Service";
  const namespace = ref.namespace ?? ctx.namespace;
  const udp = ctx.routeKind === "UDPRoute" ? ("UDP" as const) : undefined;
  const id = backendId(namespace, ref.name, ref.port ?? 0, udp);
  const fail = (reason: RouteRefFailure, message: string): ResolvedRef => ({
    id,
    issue: { reason, message: `${field}: ${message}` },
  });
  if (group !== "" || kind !== "Service") {
    // Named by kind so a log line never mistakes it for the Service of the same name.
    const named = { id: `${group ? `${group}/` : ""}${kind}:${id}` };
    return {
      ...named,
      ...fail(
        RouteReason.InvalidKind,
        `${group ? `${group}/` : ""}${kind} "${ref.name}" is not a supported backend kind; only core Services are`,
      ),
      ...named,
    };
  }
  const routeKind = ctx.routeKind ?? "HTTPRoute";
  const from = { group: gatewayGroup, kind: routeKind, namespace: ctx.namespace };
  if (!referenceAllowed(ctx.grants, from, { group: "", kind: "Service", namespace }, ref.name)) {
    return fail(
      RouteReason.RefNotPermitted,
      `Service ${namespace}/${ref.name} is in another namespace and no ReferenceGrant there allows ${routeKind}s from ${ctx.namespace}`,
    );
  }
  if (ref.port === undefined)
    return fail(RouteReason.BackendNotFound, `port is required for a Service backend`);
  const lookup = lookupServiceBackend(ctx.index, namespace, ref.name, {
    number: ref.port,
    ...(udp ? { protocol: udp } : {}),
  });
  if (lookup.issue) return fail(RouteReason.BackendNotFound, lookup.issue.message);
  const port = ctx.index.services
    .get(`${namespace}/${ref.name}`)
    ?.spec?.ports?.find((p) => p.port === ref.port);
  const appProtocol = port?.appProtocol?.toLowerCase();
  // A passthrough connection is never read, so whatever the backend speaks over TLS is fine.
  const proxied = routeKind === "HTTPRoute" || routeKind === "GRPCRoute";
  if (appProtocol && proxied && unsupportedAppProtocols.has(appProtocol)) {
    return fail(
      RouteReason.UnsupportedProtocol,
      `Service port ${ref.port} has appProtocol "${port?.appProtocol}", which Gatehouse cannot speak to a backend`,
    );
  }
  if (appProtocol && proxied && tlsAppProtocols.has(appProtocol)) {
    if (policiesForPort(ctx.index, namespace, ref.name, port?.name).winner === undefined)
      return fail(
        RouteReason.UnsupportedProtocol,
        `Service port ${ref.port} has appProtocol "${port?.appProtocol}": a BackendTLSPolicy on the Service must say how to verify the backend's certificate (it is never spoken to in cleartext)`,
      );
  }
  return { id, backend: lookup.backend };
}

/** A weighted model entry for a resolved reference: invalid ones answer 500 when picked. */
export function weightedBackend(
  resolved: ResolvedRef,
  weight: number,
  filters: readonly Filter[],
): WeightedBackend {
  const backendId = resolved.backend?.id ?? resolved.id;
  return resolved.backend ? { backendId, weight, filters } : { backendId, weight, filters, failStatus: 500 };
}
