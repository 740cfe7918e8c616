import { z } from "zod";
import { gatewayTyped, httpBackendRef, httpRouteFilter, parentRef, valueMatch } from "./gateway.ts";

/**
 * GRPCRoute (v1, standard channel) as Gatehouse reads it: hostnames, parentRefs and rules of method and
 * header matches, filters and weighted backendRefs. Its filters and backendRefs have HTTPRoute's shapes
 * (translation refuses the filter types GRPCRoute does not have). Lenient like the other Gateway API
 * schemas (gateway.ts): unknown fields pass and values are judged by translation.
 */

const optStr = z.string().optional();

const grpcRouteMatch = z
  .object({
    method: z.object({ type: optStr, service: optStr, method: optStr }).loose().optional(),
    headers: z.array(valueMatch).optional(),
  })
  .loose();
export type GRPCRouteMatch = z.infer<typeof grpcRouteMatch>;

const grpcRouteRule = z
  .object({
    name: optStr,
    matches: z.array(grpcRouteMatch).optional(),
    filters: z.array(httpRouteFilter).optional(),
    backendRefs: z.array(httpBackendRef).optional(),
    /** Experimental; read as on HTTPRoute (httproute/session-persistence.ts). */
    sessionPersistence: z.unknown().optional(),
  })
  .loose();
export type GRPCRouteRule = z.infer<typeof grpcRouteRule>;

export const grpcRoute = gatewayTyped(
  "GRPCRoute",
  z
    .object({
      parentRefs: z.array(parentRef).optional(),
      hostnames: z.array(z.string()).optional(),
      rules: z.array(grpcRouteRule).optional(),
    })
    .loose(),
);
export type GRPCRoute = z.infer<typeof grpcRoute>;
