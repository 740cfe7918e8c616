import { z } from "zod";
import { policyGroup } from "./groups.ts";
import { objectMeta } from "./meta.ts";

export { policyGroup };

/** LocalPolicyTargetReferenceWithSectionName (GEP-713): same namespace as the policy. */
export const policyTargetRef = z
  .object({
    group: z.string(),
    kind: z.string(),
    name: z.string().min(1),
    sectionName: z.string().optional(),
  })
  .loose();
export type PolicyTargetRef = z.infer<typeof policyTargetRef>;

/**
 * `gatehouse.dev/v1alpha1` AuthPolicy. Only the envelope and `targetRefs` are checked here; the rest of
 * the spec is judged by translation (src/translate/policies/auth-policy-spec.ts). Why: an object refused here
 * vanishes, and a vanished auth policy would leave its routes open. A policy whose spec is wrong must
 * still attach, get an `Invalid` condition and make its routes answer 401 (fail closed).
 */
export const authPolicy = z
  .object({
    apiVersion: z.literal(`${policyGroup}/v1alpha1`),
    kind: z.literal("AuthPolicy"),
    metadata: objectMeta,
    spec: z.object({ targetRefs: z.array(policyTargetRef).min(1).max(16) }).loose(),
    /** Status is ours to write; accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type AuthPolicy = z.infer<typeof authPolicy>;
