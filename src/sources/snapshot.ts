import type { AuthPolicy } from "./schema/auth-policy.ts";
import type { BackendTLSPolicy } from "./schema/backend-tls-policy.ts";
import type { ConfigMap, EndpointSlice, Secret, Service } from "./schema/core.ts";
import type {
  Gateway,
  GatewayClass,
  HTTPRoute,
  ListenerSet,
  Namespace,
  ReferenceGrant,
} from "./schema/gateway.ts";
import type { GRPCRoute } from "./schema/grpcroute.ts";
import type { Ingress, IngressClass } from "./schema/networking.ts";
import type { RateLimitPolicy, WAFPolicy } from "./schema/policies.ts";
import type { HTTPRouteFilterObject } from "./schema/route-filter.ts";
import type { ScaleToZeroPolicy } from "./schema/scale-policy.ts";
import type { TCPRoute, UDPRoute } from "./schema/stream-routes.ts";
import type { TLSRoute } from "./schema/tlsroute.ts";
import type { BackendTrafficPolicy } from "./schema/traffic-policy.ts";

/**
 * Everything the sources know, frozen at one moment. Both the folder source and the Kubernetes source
 * produce this, so translation has one code path. Objects here passed schema validation; objects that
 * did not are reported by the source and left out.
 */
export interface ResourceSnapshot {
  readonly ingressClasses: readonly IngressClass[];
  readonly ingresses: readonly Ingress[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly secrets: readonly Secret[];
  /** ConfigMaps, read for their `data` only (ingress-nginx `custom-headers`, CA bundles of Gateway
   * `spec.tls.frontend` and BackendTLSPolicies). The Kubernetes source delivers only those something
   * references; the folder source every one in the folder. */
  readonly configMaps: readonly ConfigMap[];
  /** Core Namespaces, read only for their labels (Gateway `allowedRoutes.namespaces.selector`). A
   * namespace with no object here is taken to carry only `kubernetes.io/metadata.name`. */
  readonly namespaces: readonly Namespace[];
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  /** ListenerSets: listeners added to the Gateways that admit them (`spec.allowedListeners`). */
  readonly listenerSets: readonly ListenerSet[];
  readonly httpRoutes: readonly HTTPRoute[];
  /** GRPCRoutes: gRPC methods routed on HTTP and HTTPS listeners, translated into the same routes. */
  readonly grpcRoutes: readonly GRPCRoute[];
  /** TLSRoutes (any served version), routed by SNI on TLS Passthrough listeners. */
  readonly tlsRoutes: readonly TLSRoute[];
  /** TCPRoutes (v1 or v1alpha2): every connection to a TCP listener piped to one backend. */
  readonly tcpRoutes: readonly TCPRoute[];
  /** UDPRoutes (v1 or v1alpha2): every client's datagrams to a UDP listener relayed to one backend. */
  readonly udpRoutes: readonly UDPRoute[];
  readonly referenceGrants: readonly ReferenceGrant[];
  /** BackendTLSPolicies (Gateway API v1): TLS to the Services they target; translate/gateway/backend-tls/. */
  readonly backendTLSPolicies: readonly BackendTLSPolicy[];
  /** gatehouse.dev AuthPolicies (GEP-713 targetRefs); see docs/auth.md. */
  readonly authPolicies: readonly AuthPolicy[];
  /** gatehouse.dev RateLimitPolicies (GEP-713 targetRefs); see docs/ratelimit.md. */
  readonly rateLimitPolicies: readonly RateLimitPolicy[];
  /** gatehouse.dev BackendTrafficPolicies (targetRefs to Services); see docs/traffic-policy.md. */
  readonly backendTrafficPolicies: readonly BackendTrafficPolicy[];
  /** gatehouse.dev ScaleToZeroPolicies (targetRefs to Services); see docs/scale-to-zero.md. */
  readonly scaleToZeroPolicies: readonly ScaleToZeroPolicy[];
  /** gatehouse.dev WAFPolicies (GEP-713 targetRefs); see docs/waf.md. */
  readonly wafPolicies: readonly WAFPolicy[];
  /** gatehouse.dev HTTPRouteFilters, named by HTTPRoute `ExtensionRef` filters; see docs/gateway-api.md. */
  readonly httpRouteFilters: readonly HTTPRouteFilterObject[];
  /**
   * Objects something references that the source could not read (a failed GET, RBAC that does not let it
   * list the kind): absent from their field, and listed here so that translation says so instead of
   * "not found". Kubernetes source only.
   */
  readonly unreadable?: readonly UnreadableObject[];
}

/** A referenced object the source could not read, and why. */
export interface UnreadableObject {
  readonly kind: "Secret" | "ConfigMap";
  readonly namespace: string;
  readonly name: string;
  readonly why: string;
}

/** A snapshot with nothing in it: what the gateway serves before its first source sync. */
export const emptySnapshot: ResourceSnapshot = {
  ingressClasses: [],
  ingresses: [],
  services: [],
  endpointSlices: [],
  secrets: [],
  configMaps: [],
  namespaces: [],
  gatewayClasses: [],
  gateways: [],
  listenerSets: [],
  httpRoutes: [],
  grpcRoutes: [],
  tlsRoutes: [],
  tcpRoutes: [],
  udpRoutes: [],
  referenceGrants: [],
  backendTLSPolicies: [],
  authPolicies: [],
  rateLimitPolicies: [],
  backendTrafficPolicies: [],
  scaleToZeroPolicies: [],
  wafPolicies: [],
  httpRouteFilters: [],
};

/** A fresh mutable field → array record with every snapshot field, for sources that fill one. */
export function emptySnapshotFields(): Record<keyof ResourceSnapshot, unknown[]> {
  const fields = {} as Record<keyof ResourceSnapshot, unknown[]>;
  for (const key of Object.keys(emptySnapshot) as (keyof ResourceSnapshot)[]) fields[key] = [];
  return fields;
}
