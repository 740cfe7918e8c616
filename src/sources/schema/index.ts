import type { z } from "zod";
import type { ResourceSnapshot } from "../snapshot.ts";
import type * as AuthPolicySchemas from "./auth-policy.ts";
import type * as BackendTLSPolicySchemas from "./backend-tls-policy.ts";
import type * as CoreSchemas from "./core.ts";
import type * as GatewaySchemas from "./gateway.ts";
import type * as GRPCRouteSchemas from "./grpcroute.ts";
import type * as NetworkingSchemas from "./networking.ts";
import type * as PolicySchemas from "./policies.ts";
import type * as RouteFilterSchemas from "./route-filter.ts";
import type * as ScalePolicySchemas from "./scale-policy.ts";
import type * as StreamRouteSchemas from "./stream-routes.ts";
import type * as TLSRouteSchemas from "./tlsroute.ts";
import type * as TrafficPolicySchemas from "./traffic-policy.ts";
import { describeUnknownFields, unknownFields } from "./unknown-fields.ts";

/**
 * The schema modules, each loaded (and its schemas built) when an object of one of its kinds is first
 * read: building every schema took a fifth of the start of a `gatehouse translate` that reads a few
 * Ingresses. `require`, not `import()`: validation is synchronous.
 */
const modules = {
  authPolicy: () => require("./auth-policy.ts") as typeof AuthPolicySchemas,
  backendTLSPolicy: () => require("./backend-tls-policy.ts") as typeof BackendTLSPolicySchemas,
  core: () => require("./core.ts") as typeof CoreSchemas,
  gateway: () => require("./gateway.ts") as typeof GatewaySchemas,
  grpcRoute: () => require("./grpcroute.ts") as typeof GRPCRouteSchemas,
  networking: () => require("./networking.ts") as typeof NetworkingSchemas,
  policies: () => require("./policies.ts") as typeof PolicySchemas,
  routeFilter: () => require("./route-filter.ts") as typeof RouteFilterSchemas,
  tlsRoute: () => require("./tlsroute.ts") as typeof TLSRouteSchemas,
  streamRoutes: () => require("./stream-routes.ts") as typeof StreamRouteSchemas,
  trafficPolicy: () => require("./traffic-policy.ts") as typeof TrafficPolicySchemas,
  scalePolicy: () => require("./scale-policy.ts") as typeof ScalePolicySchemas,
};

/** Each kind we read: its schema and the snapshot field its objects go into. */
export const knownKinds = {
  IngressClass: {
    field: "ingressClasses",
    get schema() {
      return modules.networking().ingressClass;
    },
  },
  Ingress: {
    field: "ingresses",
    get schema() {
      return modules.networking().ingress;
    },
  },
  Service: {
    field: "services",
    get schema() {
      return modules.core().service;
    },
  },
  EndpointSlice: {
    field: "endpointSlices",
    get schema() {
      return modules.core().endpointSlice;
    },
  },
  Secret: {
    field: "secrets",
    get schema() {
      return modules.core().secret;
    },
  },
  ConfigMap: {
    field: "configMaps",
    get schema() {
      return modules.core().configMap;
    },
  },
  Namespace: {
    field: "namespaces",
    get schema() {
      return modules.gateway().namespace;
    },
  },
  GatewayClass: {
    field: "gatewayClasses",
    get schema() {
      return modules.gateway().gatewayClass;
    },
  },
  Gateway: {
    field: "gateways",
    get schema() {
      return modules.gateway().gateway;
    },
  },
  HTTPRoute: {
    field: "httpRoutes",
    get schema() {
      return modules.gateway().httpRoute;
    },
  },
  GRPCRoute: {
    field: "grpcRoutes",
    get schema() {
      return modules.grpcRoute().grpcRoute;
    },
  },
  ListenerSet: {
    field: "listenerSets",
    get schema() {
      return modules.gateway().listenerSet;
    },
  },
  TLSRoute: {
    field: "tlsRoutes",
    get schema() {
      return modules.tlsRoute().tlsRoute;
    },
  },
  TCPRoute: {
    field: "tcpRoutes",
    get schema() {
      return modules.streamRoutes().tcpRoute;
    },
  },
  UDPRoute: {
    field: "udpRoutes",
    get schema() {
      return modules.streamRoutes().udpRoute;
    },
  },
  BackendTLSPolicy: {
    field: "backendTLSPolicies",
    get schema() {
      return modules.backendTLSPolicy().backendTLSPolicy;
    },
  },
  ReferenceGrant: {
    field: "referenceGrants",
    get schema() {
      return modules.gateway().referenceGrant;
    },
  },
  AuthPolicy: {
    field: "authPolicies",
    get schema() {
      return modules.authPolicy().authPolicy;
    },
  },
  RateLimitPolicy: {
    field: "rateLimitPolicies",
    get schema() {
      return modules.policies().rateLimitPolicy;
    },
  },
  BackendTrafficPolicy: {
    field: "backendTrafficPolicies",
    get schema() {
      return modules.trafficPolicy().backendTrafficPolicy;
    },
  },
  ScaleToZeroPolicy: {
    field: "scaleToZeroPolicies",
    get schema() {
      return modules.scalePolicy().scaleToZeroPolicy;
    },
  },
  WAFPolicy: {
    field: "wafPolicies",
    get schema() {
      return modules.policies().wafPolicy;
    },
  },
  HTTPRouteFilter: {
    field: "httpRouteFilters",
    get schema() {
      return modules.routeFilter().httpRouteFilter;
    },
  },
} as const satisfies Record<string, { readonly schema: z.ZodType; readonly field: keyof ResourceSnapshot }>;

export type KnownKind = keyof typeof knownKinds;

export function isKnownKind(kind: unknown): kind is KnownKind {
  return typeof kind === "string" && Object.hasOwn(knownKinds, kind);
}

/**
 * What a source serves in place of an object the schema refused, for the kinds whose absence would open a
 * guard: a BackendTLSPolicy that vanished would leave its Services spoken to in cleartext. Undefined for
 * every other kind (a refused object is left out and reported).
 */
export function refusedStandIn(kind: KnownKind, raw: unknown, reason: string): unknown {
  return kind === "BackendTLSPolicy"
    ? modules.backendTLSPolicy().refusedBackendTLSPolicyStandIn(raw, reason)
    : undefined;
}

/** Result of validating one raw object. */
export type ParsedObject =
  | { readonly ok: true; readonly kind: KnownKind; readonly object: unknown }
  | { readonly ok: false; readonly kind: string; readonly name: string; readonly reason: string };

/**
 * Validate one raw object (from YAML or the API). Never throws: a bad object comes back with a reason
 * naming the offending field paths, e.g. `spec.rules[0].http.paths[0].pathtype: unknown field`.
 */
export function parseObject(
  raw: unknown,
): ParsedObject | { readonly ok: false; readonly unknownKind: string } {
  const rec = (raw ?? {}) as Record<string, unknown>;
  const kind = rec.kind;
  const meta = (rec.metadata ?? {}) as Record<string, unknown>;
  const name = `${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${String(meta.name ?? "?")}`;
  if (!isKnownKind(kind)) return { ok: false, unknownKind: String(kind ?? "(no kind)") };
  const result = knownKinds[kind].schema.safeParse(raw);
  if (result.success) return { ok: true, kind, object: result.data };
  const reason = result.error.issues
    .slice(0, 5)
    .map((issue) => `${formatPath(issue.path)}: ${describeIssue(issue)}`)
    .join("; ");
  return { ok: false, kind, name, reason };
}

/**
 * Kinds whose schemas let unknown fields through (the Gateway API ones: a field of a newer version or of
 * the experimental channel must not get the whole object refused), so that `unknownFieldsWarning`
 * reports them instead. The other kinds refuse unknown fields (Ingress, core) or their spec is judged by
 * translation, which refuses unknown fields itself (AuthPolicy, RateLimitPolicy, BackendTrafficPolicy,
 * ScaleToZeroPolicy, WAFPolicy, HTTPRouteFilter).
 */
export const lenientKinds: ReadonlySet<KnownKind> = new Set<KnownKind>([
  "GatewayClass",
  "Gateway",
  "HTTPRoute",
  "GRPCRoute",
  "TLSRoute",
  "ListenerSet",
  "TCPRoute",
  "UDPRoute",
  "ReferenceGrant",
  "BackendTLSPolicy",
]);

/**
 * For an object `parseObject` accepted: the fields of `raw` its (lenient) schema does not declare, as one
 * message (`spec.listners: unknown field, not read; …`, at most 10 paths and a count of the rest), or
 * undefined when there are none or the kind is not lenient. The object is served all the same.
 */
export function unknownFieldsWarning(kind: KnownKind, raw: unknown): string | undefined {
  if (!lenientKinds.has(kind)) return undefined;
  return describeUnknownFields(unknownFields(knownKinds[kind].schema, raw));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys")
    return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
  return issue.message;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  return out || "(root)";
}
