import { z } from "zod";
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
