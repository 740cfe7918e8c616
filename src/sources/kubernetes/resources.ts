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
 * (Gateway `allowedRoutes.namespaces.selector`). Our own policy CRDs join this table when their schemas
 * exist in `knownKinds`.
 */
export const watchedResources: Readonly<Record<KnownKind, ApiResource>> = {
  GatewayClass: res("GatewayClass", "gateway.networking.k8s.io", "v1", "gatewayclasses", false),
  Gateway: res("Gateway", "gateway.networking.k8s.io", "v1", "gateways", true),
  HTTPRoute: res("HTTPRoute", "gateway.networking.k8s.io", "v1", "httproutes", true),
  TLSRoute: res("TLSRoute", "gateway.networking.k8s.io", "v1", "tlsroutes", true),
  ReferenceGrant: res("ReferenceGrant", "gateway.networking.k8s.io", "v1beta1", "referencegrants", true),
  IngressClass: res("IngressClass", "networking.k8s.io", "v1", "ingressclasses", false),
  Ingress: res("Ingress", "networking.k8s.io", "v1", "ingresses", true),
  Service: res("Service", "", "v1", "services", true),
  EndpointSlice: res("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", true),
  Secret: res("Secret", "", "v1", "secrets", true),
  Namespace: res("Namespace", "", "v1", "namespaces", false),
  AuthPolicy: res("AuthPolicy", "gatehouse.dev", "v1alpha1", "authpolicies", true),
  RateLimitPolicy: res("RateLimitPolicy", "gatehouse.dev", "v1alpha1", "ratelimitpolicies", true),
};

/** The Lease kind leader election reads and writes. */
export const leaseResource: ApiResource = res("Lease", "coordination.k8s.io", "v1", "leases", true);

/** Kinds whose `/status` the status writer patches. */
export const statusResources: Readonly<Record<string, ApiResource>> = {
  GatewayClass: watchedResources.GatewayClass,
  Gateway: watchedResources.Gateway,
  HTTPRoute: watchedResources.HTTPRoute,
  TLSRoute: watchedResources.TLSRoute,
  Ingress: watchedResources.Ingress,
  AuthPolicy: watchedResources.AuthPolicy,
  RateLimitPolicy: watchedResources.RateLimitPolicy,
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
