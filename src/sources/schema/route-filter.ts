import { z } from "zod";
import { policyGroup } from "./groups.ts";
import { objectMeta } from "./meta.ts";

/**
 * `gatehouse.dev/v1alpha1` HTTPRouteFilter (gateway-crds/httproutefilter.yaml): what an HTTPRoute rule
 * names in an `ExtensionRef` filter for the rewrites, redirects and CORS Gateway API has no field for.
 * Only the envelope is checked here; the spec is judged by translation
 * (src/translate/gateway/httproute/extension-filter.ts), so a wrong field is reported on the HTTPRoute
 * that uses the filter, naming the field, instead of the filter vanishing and the route saying "not found".
 */
export const httpRouteFilter = z
  .object({
    apiVersion: z.literal(`${policyGroup}/v1alpha1`),
    kind: z.literal("HTTPRouteFilter"),
    metadata: objectMeta,
    spec: z.record(z.string(), z.unknown()),
  })
  .loose();
export type HTTPRouteFilterObject = z.infer<typeof httpRouteFilter>;
