import { z } from "zod";
import { objectMeta } from "./meta.ts";

/**
 * Gateway API v1 kinds (GatewayClass, Gateway, HTTPRoute, ReferenceGrant) and core Namespace, as far as
 * Gatehouse reads them.
 *
 * Unlike the Ingress schemas, these are deliberately lenient: unknown fields are allowed (the
 * experimental channel adds fields every release) and enum-like fields are plain strings. The Gateway
 * API reports bad values through status conditions (`UnsupportedProtocol`, `UnsupportedValue`, …), and
 * an object refused here would vanish without any status at all; so only the shape is checked here
 * (types of the fields we read) and translation judges the values.
 */

const str = z.string();
const optStr = z.string().optional();
const int = z.number().int();

/** `group`/`kind`/`name`/`namespace` reference, as in BackendObjectReference and SecretObjectReference. */
const objectRef = z
  .object({ group: optStr, kind: optStr, name: str, namespace: optStr, port: int.optional() })
  .loose();

export const gatewayTyped = <K extends string, S extends z.ZodType>(kind: K, spec: S) =>
  z
    .object({
      apiVersion: z.enum(["gateway.networking.k8s.io/v1", "gateway.networking.k8s.io/v1beta1"]),
      kind: z.literal(kind),
      metadata: objectMeta,
      spec,
      /** Status is ours to write; accepted and ignored on input. */
      status: z.unknown().optional(),
    })
    .loose();

export const gatewayClass = gatewayTyped(
  "GatewayClass",
  z.object({ controllerName: str, description: optStr, parametersRef: z.unknown().optional() }).loose(),
);
export type GatewayClass = z.infer<typeof gatewayClass>;

const labelSelector = z
  .object({
    matchLabels: z.record(str, str).optional(),
    matchExpressions: z
      .array(z.object({ key: str, operator: str, values: z.array(str).optional() }).loose())
      .optional(),
  })
  .loose();
export type LabelSelector = z.infer<typeof labelSelector>;

const gatewayListener = z
  .object({
    name: str,
    hostname: optStr,
    port: int,
    protocol: str,
    tls: z
      .object({
        mode: optStr,
        certificateRefs: z.array(objectRef).optional(),
        options: z.unknown().optional(),
      })
      .loose()
      .optional(),
    allowedRoutes: z
      .object({
        namespaces: z.object({ from: optStr, selector: labelSelector.optional() }).loose().optional(),
        kinds: z.array(z.object({ group: optStr, kind: str }).loose()).optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type GatewayListener = z.infer<typeof gatewayListener>;

/** TLSConfig of `spec.tls.frontend`: only whether `validation` (client certificates) is set matters. */
const frontendTLSConfig = z.object({ validation: z.unknown().optional() }).loose();

/** GatewayTLSConfig: frontend client-certificate validation and the backend client certificate. */
const gatewayTLS = z
  .object({
    frontend: z
      .object({
        default: frontendTLSConfig.optional(),
        perPort: z.array(z.object({ port: int, tls: frontendTLSConfig.optional() }).loose()).optional(),
      })
      .loose()
      .optional(),
    backend: z.object({ clientCertificateRef: objectRef.optional() }).loose().optional(),
  })
  .loose();

export const gateway = gatewayTyped(
  "Gateway",
  z
    .object({
      gatewayClassName: str,
      listeners: z.array(gatewayListener).optional(),
      addresses: z.array(z.object({ type: optStr, value: optStr }).loose()).optional(),
      tls: gatewayTLS.optional(),
      infrastructure: z
        .object({
          labels: z.unknown().optional(),
          annotations: z.unknown().optional(),
          parametersRef: z.unknown().optional(),
        })
        .loose()
        .optional(),
      allowedListeners: z
        .object({
          namespaces: z.object({ from: optStr, selector: labelSelector.optional() }).loose().optional(),
        })
        .loose()
        .optional(),
      /** Experimental (default Gateways, GEP-3793). */
      defaultScope: optStr,
    })
    .loose(),
);
export type Gateway = z.infer<typeof gateway>;

/** ListenerSet (standard in v1.6.1): more listeners for a Gateway that admits them (`allowedListeners`). */
export const listenerSet = gatewayTyped(
  "ListenerSet",
  z
    .object({
      parentRef: z.object({ group: optStr, kind: optStr, namespace: optStr, name: str }).loose(),
      listeners: z.array(gatewayListener).optional(),
    })
    .loose(),
);
export type ListenerSet = z.infer<typeof listenerSet>;

const headerValue = z.object({ name: str, value: str }).loose();
const headerFilter = z
  .object({
    set: z.array(headerValue).optional(),
    add: z.array(headerValue).optional(),
    remove: z.array(str).optional(),
  })
  .loose();
const pathModifier = z.object({ type: str, replaceFullPath: optStr, replacePrefixMatch: optStr }).loose();

export const httpRouteFilter = z
  .object({
    type: str,
    requestHeaderModifier: headerFilter.optional(),
    responseHeaderModifier: headerFilter.optional(),
    requestRedirect: z
      .object({
        scheme: optStr,
        hostname: optStr,
        path: pathModifier.optional(),
        port: int.optional(),
        statusCode: int.optional(),
      })
      .loose()
      .optional(),
    urlRewrite: z.object({ hostname: optStr, path: pathModifier.optional() }).loose().optional(),
    requestMirror: z
      .object({
        backendRef: objectRef,
        percent: z.number().optional(),
        fraction: z.object({ numerator: int, denominator: int.optional() }).loose().optional(),
      })
      .loose()
      .optional(),
    cors: z
      .object({
        allowOrigins: z.array(str).optional(),
        allowMethods: z.array(str).optional(),
        allowHeaders: z.array(str).optional(),
        exposeHeaders: z.array(str).optional(),
        allowCredentials: z.boolean().optional(),
        maxAge: int.optional(),
      })
      .loose()
      .optional(),
    extensionRef: z.unknown().optional(),
  })
  .loose();
export type HTTPRouteFilter = z.infer<typeof httpRouteFilter>;

export const valueMatch = z.object({ type: optStr, name: str, value: str }).loose();
const httpRouteMatch = z
  .object({
    path: z.object({ type: optStr, value: optStr }).loose().optional(),
    headers: z.array(valueMatch).optional(),
    queryParams: z.array(valueMatch).optional(),
    method: optStr,
  })
  .loose();
export type HTTPRouteMatch = z.infer<typeof httpRouteMatch>;

export const httpBackendRef = objectRef.extend({
  weight: int.optional(),
  filters: z.array(httpRouteFilter).optional(),
});
export type HTTPBackendRef = z.infer<typeof httpBackendRef>;

const httpRouteRule = z
  .object({
    name: optStr,
    matches: z.array(httpRouteMatch).optional(),
    filters: z.array(httpRouteFilter).optional(),
    backendRefs: z.array(httpBackendRef).optional(),
    timeouts: z.object({ request: optStr, backendRequest: optStr }).loose().optional(),
    retry: z
      .object({ codes: z.array(int).optional(), attempts: int.optional(), backoff: optStr })
      .loose()
      .optional(),
    /** Experimental; not supported: a rule that sets it is refused (httproute.ts). */
    sessionPersistence: z.unknown().optional(),
  })
  .loose();
export type HTTPRouteRule = z.infer<typeof httpRouteRule>;

export const parentRef = z
  .object({
    group: optStr,
    kind: optStr,
    namespace: optStr,
    name: str,
    sectionName: optStr,
    port: int.optional(),
  })
  .loose();
export type ParentReference = z.infer<typeof parentRef>;

export const httpRoute = gatewayTyped(
  "HTTPRoute",
  z
    .object({
      parentRefs: z.array(parentRef).optional(),
      hostnames: z.array(str).optional(),
      rules: z.array(httpRouteRule).optional(),
      /** Experimental (default Gateways, GEP-3793); not supported, reported. */
      useDefaultGateways: optStr,
    })
    .loose(),
);
export type HTTPRoute = z.infer<typeof httpRoute>;

const grantSubject = z.object({ group: str, kind: str, namespace: optStr, name: optStr }).loose();

export const referenceGrant = gatewayTyped(
  "ReferenceGrant",
  z.object({ from: z.array(grantSubject), to: z.array(grantSubject) }).loose(),
);
export type ReferenceGrant = z.infer<typeof referenceGrant>;

/** Core Namespace: only its labels are read, for `allowedRoutes.namespaces.selector`. */
export const namespace = z
  .object({
    apiVersion: z.literal("v1"),
    kind: z.literal("Namespace"),
    metadata: objectMeta,
    spec: z.unknown().optional(),
    status: z.unknown().optional(),
  })
  .loose();
export type Namespace = z.infer<typeof namespace>;
