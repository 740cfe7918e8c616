import type { KnownKind } from "../schema/index.ts";

/** Where one kind lives in the Kubernetes API. */
export interface ApiResource {
  readonly kind: string;
  /** API group, "" for core. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural, the path segment and the RBAC resource name. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/**
 * The kinds the Kubernetes source lists and watches (cluster-wide). Namespace is read only for its labels
 * (Gateway `allowedRoutes.namespaces.selector`); Secrets and ConfigMaps keep their data only while
 * something references them (referenced-data.ts). Our own policy CRDs join this table when their schemas
 * exist in `knownKinds`.
 */
export const watchedResources: Readonly<Record<KnownKind, ApiResource>> = {
  GatewayClass: res("GatewayClass", "gateway.networking.k8s.io", "v1", "gatewayclasses", false),
  Gateway: res("Gateway", "gateway.networking.k8s.io", "v1", "gateways", true),
  HTTPRoute: res("HTTPRoute", "gateway.networking.k8s.io", "v1", "httproutes", true),
  GRPCRoute: res("GRPCRoute", "gateway.networking.k8s.io", "v1", "grpcroutes", true),
  TLSRoute: res("TLSRoute", "gateway.networking.k8s.io", "v1", "tlsroutes", true),
  ListenerSet: res("ListenerSet", "gateway.networking.k8s.io", "v1", "listenersets", true),
  TCPRoute: res("TCPRoute", "gateway.networking.k8s.io", "v1", "tcproutes", true),
  UDPRoute: res("UDPRoute", "gateway.networking.k8s.io", "v1", "udproutes", true),
  ReferenceGrant: res("ReferenceGrant", "gateway.networking.k8s.io", "v1beta1", "referencegrants", true),
  BackendTLSPolicy: res("BackendTLSPolicy", "gateway.networking.k8s.io", "v1", "backendtlspolicies", true),
  IngressClass: res("IngressClass", "networking.k8s.io", "v1", "ingressclasses", false),
  Ingress: res("Ingress", "networking.k8s.io", "v1", "ingresses", true),
  Service: res("Service", "", "v1", "services", true),
  EndpointSlice: res("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", true),
  Secret: res("Secret", "", "v1", "secrets", true),
  ConfigMap: res("ConfigMap", "", "v1", "configmaps", true),
  Namespace: res("Namespace", "", "v1", "namespaces", false),
  AuthPolicy: res("AuthPolicy", "gatehouse.dev", "v1alpha1", "authpolicies", true),
  RateLimitPolicy: res("RateLimitPolicy", "gatehouse.dev", "v1alpha1", "ratelimitpolicies", true),
  BackendTrafficPolicy: res(
    "BackendTrafficPolicy",
    "gatehouse.dev",
    "v1alpha1",
    "backendtrafficpolicies",
    true,
  ),
  ScaleToZeroPolicy: res("ScaleToZeroPolicy", "gatehouse.dev", "v1alpha1", "scaletozeropolicies", true),
  WAFPolicy: res("WAFPolicy", "gatehouse.dev", "v1alpha1", "wafpolicies", true),
  HTTPRouteFilter: res("HTTPRouteFilter", "gatehouse.dev", "v1alpha1", "httproutefilters", true),
};

/**
 * Watched kinds that only one feature reads, so that a ClusterRole from before that feature does not keep
 * the gateway from becoming ready: a 403 on their list counts as empty (KindInformerOptions
 * `forbiddenIsEmpty`), and the feature reports what it could not read (ConfigMaps: `custom-headers`, and
 * the CA bundles of Gateway `spec.tls.frontend` and BackendTLSPolicies, which then say InvalidCACertificateRef
 * and fail closed). Every other kind stays required: without it the configuration would be wrong, not
 * short. BackendTLSPolicy too: unseen, its Services would be spoken to in cleartext. BackendTrafficPolicy
 * may be forbidden: unseen, its Services are served unchecked (every ready endpoint takes traffic, as
 * before the policy existed), which the informer's warning says. ScaleToZeroPolicy too: unseen, its Services
 * answer 503 while they have no endpoint, as before the policy existed. (A 404, the CRD not installed, counts as
 * empty for every kind: then no policy can exist.)
 */
export const mayBeForbidden: ReadonlySet<KnownKind> = new Set<KnownKind>([
  "ConfigMap",
  "BackendTrafficPolicy",
  "ScaleToZeroPolicy",
]);

/**
 * Gateway API kinds that Gatehouse does not serve: every kind of the v1.6.1 standard channel is served, so
 * this is the experimental XBackendTrafficPolicy (on Services, like BackendTLSPolicy), which a user may
 * expect an implementation to honour. They are listed and watched only so that each object is reported
 * (a `SkippedKind` warning and a log line; skipped.ts) instead of ignored in silence. Unlike
 * `watchedResources` they never hold up a snapshot: a kind that is not installed, or that RBAC does not
 * let us list, just goes unreported (said once in the log).
 */
export const skippedResources: readonly ApiResource[] = [
  res("XBackendTrafficPolicy", "gateway.networking.x-k8s.io", "v1alpha1", "xbackendtrafficpolicies", true),
];

/**
 * KEDA's ScaledObject, read only to find one that scales a ScaleToZeroPolicy's workload to 0 as well
 * (scaled-objects.ts). Optional: not installed (404) means none; RBAC 403 is said in the policy's condition.
 */
export const scaledObjectResource: ApiResource = res(
  "ScaledObject",
  "keda.sh",
  "v1alpha1",
  "scaledobjects",
  true,
);

/** The Lease kind leader election reads and writes. */
export const leaseResource: ApiResource = res("Lease", "coordination.k8s.io", "v1", "leases", true);

/** Kinds whose `/status` the status writer patches. */
export const statusResources: Readonly<Record<string, ApiResource>> = {
  GatewayClass: watchedResources.GatewayClass,
  Gateway: watchedResources.Gateway,
  HTTPRoute: watchedResources.HTTPRoute,
  GRPCRoute: watchedResources.GRPCRoute,
  TLSRoute: watchedResources.TLSRoute,
  ListenerSet: watchedResources.ListenerSet,
  TCPRoute: watchedResources.TCPRoute,
  UDPRoute: watchedResources.UDPRoute,
  Ingress: watchedResources.Ingress,
  AuthPolicy: watchedResources.AuthPolicy,
  RateLimitPolicy: watchedResources.RateLimitPolicy,
  BackendTrafficPolicy: watchedResources.BackendTrafficPolicy,
  ScaleToZeroPolicy: watchedResources.ScaleToZeroPolicy,
  WAFPolicy: watchedResources.WAFPolicy,
  BackendTLSPolicy: watchedResources.BackendTLSPolicy,
};

function res(kind: string, group: string, version: string, plural: string, namespaced: boolean): ApiResource {
  return { kind, group, version, plural, namespaced };
}

/** `v1` or `group/version`: the `apiVersion` of objects of this resource. */
export function apiVersionOf(r: ApiResource): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * The URL path of a resource: the collection across all namespaces when `namespace` is undefined (or the
 * kind is cluster-scoped), one object when `name` is given, its subresource when `sub` is.
 */
export function resourcePath(r: ApiResource, namespace?: string, name?: string, sub?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const one = name ? `/${encodeURIComponent(name)}${sub ? `/${sub}` : ""}` : "";
  return `${base}${ns}/${r.plural}${one}`;
}
