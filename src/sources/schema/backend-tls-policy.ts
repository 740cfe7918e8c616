import { z } from "zod";
import { refusedBySchemaAnnotation } from "./groups.ts";
import { objectMeta } from "./meta.ts";

/**
 * BackendTLSPolicy (`gateway.networking.k8s.io/v1`, standard channel since v1.4; `v1alpha3` is the same
 * shape): how the gateway speaks TLS to the Services it targets. Lenient like the other Gateway API
 * schemas (gateway.ts): unknown fields pass (and are reported), enum-like fields are plain strings, and
 * the values are judged by translation (translate/gateway/backend-tls/), so a bad policy gets conditions
 * on its ancestors instead of vanishing (a vanished policy would leave its Service spoken to in cleartext).
 */
const str = z.string();

const optStr = z.string().optional();

/**
 * LocalPolicyTargetReferenceWithSectionName: a Service in the policy's namespace, `sectionName` a port name.
 * `group` is required by the CRD; an absent one is read as "" (core) rather than have the whole policy
 * refused, which would leave its Service spoken to in cleartext.
 */
const targetRef = z.object({ group: optStr, kind: str, name: str, sectionName: optStr }).loose();

/** LocalObjectReference: a CA ConfigMap in the policy's namespace. */
const localObjectRef = z.object({ group: optStr, kind: optStr, name: optStr }).loose();

const subjectAltName = z.object({ type: str, hostname: optStr, uri: optStr }).loose();

export const backendTLSPolicy = z
  .object({
    apiVersion: z.enum(["gateway.networking.k8s.io/v1", "gateway.networking.k8s.io/v1alpha3"]),
    kind: z.literal("BackendTLSPolicy"),
    metadata: objectMeta,
    spec: z
      .object({
        targetRefs: z.array(targetRef),
        /** Required by the CRD; absent, the policy is Invalid (no hostname) rather than refused here. */
        validation: z
          .object({
            caCertificateRefs: z.array(localObjectRef).optional(),
            wellKnownCACertificates: optStr,
            hostname: optStr,
            subjectAltNames: z.array(subjectAltName).optional(),
          })
          .loose()
          .optional(),
        options: z.record(str, str).optional(),
      })
      .loose(),
    /** Status is ours to write (our ancestors' entries); accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type BackendTLSPolicy = z.infer<typeof backendTLSPolicy>;

/**
 * What is served in place of a BackendTLSPolicy the schema refused (a `targetRef:` typo, a target without
 * a kind): a policy with the same name and the targets that can still be read (`spec.targetRefs` items
 * with a name, or a single `spec.targetRef`; kind Service when it is missing) and no `validation`, which
 * translation judges Invalid. Its Services then answer 503 instead of being spoken to in cleartext, which
 * is what dropping the policy would do (never open). Undefined when no target can be read (nothing to
 * protect: the refusal is reported all the same). The schema's reason rides on an annotation of the
 * stand-in (`refusedBySchemaAnnotation`), for the policy's status.
 */
export function refusedBackendTLSPolicyStandIn(raw: unknown, reason: string): BackendTLSPolicy | undefined {
  const rec = (raw ?? {}) as { metadata?: unknown; spec?: unknown };
  const meta = (rec.metadata ?? {}) as Record<string, unknown>;
  if (typeof meta.name !== "string" || meta.name === "") return undefined;
  const spec = (rec.spec ?? {}) as { targetRefs?: unknown; targetRef?: unknown };
  const candidates = Array.isArray(spec.targetRefs) ? spec.targetRefs : [spec.targetRefs, spec.targetRef];
  const targetRefs = candidates.flatMap((t) => {
    const ref = (t ?? {}) as { kind?: unknown; name?: unknown; sectionName?: unknown };
    if (typeof ref.name !== "string" || ref.name === "") return [];
    return [
      {
        group: "",
        kind: typeof ref.kind === "string" ? ref.kind : "Service",
        name: ref.name,
        ...(typeof ref.sectionName === "string" ? { sectionName: ref.sectionName } : {}),
      },
    ];
  });
  if (targetRefs.length === 0) return undefined;
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    // Identity and age as given: status goes to the object, and the oldest policy still wins a conflict.
    metadata: Object.fromEntries(
      ["name", "namespace", "creationTimestamp", "uid", "resourceVersion", "generation"]
        .map((k) => [k, meta[k]])
        .filter(([, v]) => typeof v === "string" || typeof v === "number")
        .concat([["annotations", { [refusedBySchemaAnnotation]: reason }]]),
    ),
    spec: { targetRefs },
  } as BackendTLSPolicy;
}
