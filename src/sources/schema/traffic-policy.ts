import { z } from "zod";
import { policyGroup, policyTargetRef } from "./auth-policy.ts";
import { objectMeta } from "./meta.ts";

/**
 * `gatehouse.dev/v1alpha1` BackendTrafficPolicy (gateway-crds/backendtrafficpolicy.yaml). Only the envelope
 * and `targetRefs` are checked here; the spec is judged by translation
 * (src/translate/policies/traffic-policy-spec.ts), which refuses unknown and unimplemented fields by name,
 * so the policy gets an `Invalid` condition instead of vanishing without a status.
 */
export const backendTrafficPolicy = z
  .object({
    apiVersion: z.literal(`${policyGroup}/v1alpha1`),
    kind: z.literal("BackendTrafficPolicy"),
    metadata: objectMeta,
    spec: z.object({ targetRefs: z.array(policyTargetRef).min(1).max(16) }).loose(),
    /** Status is ours to write; accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type BackendTrafficPolicy = z.infer<typeof backendTrafficPolicy>;
