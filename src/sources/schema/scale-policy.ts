import { z } from "zod";
import { policyGroup, policyTargetRef } from "./auth-policy.ts";
import { objectMeta } from "./meta.ts";

/**
 * `gatehouse.dev/v1alpha1` ScaleToZeroPolicy (gateway-crds/scaletozeropolicy.yaml). Only the envelope and
 * `targetRefs` are checked here; the spec is judged by translation (src/translate/policies/scale-policy-spec.ts),
 * which refuses unknown fields by name, so the policy gets an `Invalid` condition instead of vanishing.
 */
export const scaleToZeroPolicy = z
  .object({
    apiVersion: z.literal(`${policyGroup}/v1alpha1`),
    kind: z.literal("ScaleToZeroPolicy"),
    metadata: objectMeta,
    spec: z.object({ targetRefs: z.array(policyTargetRef).min(1).max(16) }).loose(),
    /** Status is ours to write; accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type ScaleToZeroPolicy = z.infer<typeof scaleToZeroPolicy>;
