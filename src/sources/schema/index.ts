import type { z } from "zod";
import type { ResourceSnapshot } from "../snapshot.ts";
import { authPolicy } from "./auth-policy.ts";
import { endpointSlice, secret, service } from "./core.ts";
import { gateway, gatewayClass, httpRoute, namespace, referenceGrant } from "./gateway.ts";
import { ingress, ingressClass } from "./networking.ts";
import { rateLimitPolicy } from "./policies.ts";
import { tlsRoute } from "./tlsroute.ts";
import { describeUnknownFields, unknownFields } from "./unknown-fields.ts";

/** Each kind we read: its schema and the snapshot field its objects go into. */
export const knownKinds = {
  IngressClass: { schema: ingressClass, field: "ingressClasses" },
  Ingress: { schema: ingress, field: "ingresses" },
  Service: { schema: service, field: "services" },
  EndpointSlice: { schema: endpointSlice, field: "endpointSlices" },
  Secret: { schema: secret, field: "secrets" },
  Namespace: { schema: namespace, field: "namespaces" },
  GatewayClass: { schema: gatewayClass, field: "gatewayClasses" },
  Gateway: { schema: gateway, field: "gateways" },
  HTTPRoute: { schema: httpRoute, field: "httpRoutes" },
  TLSRoute: { schema: tlsRoute, field: "tlsRoutes" },
  ReferenceGrant: { schema: referenceGrant, field: "referenceGrants" },
  AuthPolicy: { schema: authPolicy, field: "authPolicies" },
  RateLimitPolicy: { schema: rateLimitPolicy, field: "rateLimitPolicies" },
} as const satisfies Record<string, { schema: z.ZodType; field: keyof ResourceSnapshot }>;

export type KnownKind = keyof typeof knownKinds;

export function isKnownKind(kind: unknown): kind is KnownKind {
  return typeof kind === "string" && Object.hasOwn(knownKinds, kind);
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
 * translation, which refuses unknown fields itself (AuthPolicy, RateLimitPolicy).
 */
export const lenientKinds: ReadonlySet<KnownKind> = new Set<KnownKind>([
  "GatewayClass",
  "Gateway",
  "HTTPRoute",
  "TLSRoute",
  "ReferenceGrant",
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
