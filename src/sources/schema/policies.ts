import { z } from "zod";
import { policyGroup, policyTargetRef } from "./auth-policy.ts";
import { objectMeta } from "./meta.ts";

/**
 * `gatehouse.dev/v1alpha1` RateLimitPolicy (gateway-crds/ratelimitpolicy.yaml). Only the envelope, the
 * shape of `targetRefs` and the types of the spec's fields are checked here; values (a zero limit, an
 * unknown key source, a bad window) are judged by translation (src/translate/policies/ratelimit-policy.ts) so the
 * policy gets an `Invalid` condition naming the field instead of vanishing without a status.
 */
const rule = z
  .object({
    name: z.string().optional(),
    limit: z.number(),
    window: z.string(),
    burst: z.number().optional(),
    keys: z.array(z.string()).optional(),
  })
  .loose();

export const rateLimitPolicy = z
  .object({
    apiVersion: z.literal(`${policyGroup}/v1alpha1`),
    kind: z.literal("RateLimitPolicy"),
    metadata: objectMeta,
    spec: z
      .object({
        targetRefs: z.array(policyTargetRef).min(1).max(16),
        rules: z.array(rule),
        shared: z.boolean().optional(),
        clientIP: z
          .object({ trustedProxies: z.array(z.string()).optional() })
          .loose()
          .optional(),
        exempt: z.array(z.string()).optional(),
        failureMode: z.string().optional(),
        shadow: z.boolean().optional(),
        hideHeaders: z.boolean().optional(),
      })
      .loose(),
    /** Status is ours to write; accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type RateLimitPolicy = z.infer<typeof rateLimitPolicy>;
export type RateLimitPolicySpec = RateLimitPolicy["spec"];

/**
 * `gatehouse.dev/v1alpha1` WAFPolicy (gateway-crds/wafpolicy.yaml). Only the envelope and `targetRefs` are
 * checked here; the spec is judged by translation (src/translate/policies/waf-policy.ts). Why: an object
 * refused here vanishes, and a vanished WAF policy would leave its routes uninspected. A policy whose spec
 * is wrong must still attach, get an `Invalid` condition and make its routes answer 503 (fail closed).
 */
export const wafPolicy = z
  .object({
    apiVersion: z.literal(`${policyGroup}/v1alpha1`),
    kind: z.literal("WAFPolicy"),
    metadata: objectMeta,
    spec: z.object({ targetRefs: z.array(policyTargetRef).min(1).max(16) }).loose(),
    /** Status is ours to write; accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type WAFPolicy = z.infer<typeof wafPolicy>;
