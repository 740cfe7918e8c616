import { z } from "zod";
import { objectMeta } from "./meta.ts";
import { backendRef, parentRef } from "./tlsroute.ts";

/**
 * TCPRoute and UDPRoute as Gatehouse reads them: parentRefs and the weighted backendRefs of their rules,
 * no matches (a TCP or UDP listener forwards every connection or flow). `v1` is standard channel since
 * v1.5 (the v1.6.1 conformance manifests use it); `v1alpha2` is the experimental version before it, same
 * fields. Lenient like the other Gateway API schemas: unknown fields pass and values are judged by
 * translation (status conditions).
 */
export const streamRouteVersions = [
  "gateway.networking.k8s.io/v1",
  "gateway.networking.k8s.io/v1alpha2",
] as const;

function streamRoute<K extends "TCPRoute" | "UDPRoute">(kind: K) {
  return z
    .object({
      apiVersion: z.enum(streamRouteVersions),
      kind: z.literal(kind),
      metadata: objectMeta,
      spec: z
        .object({
          parentRefs: z.array(parentRef).optional(),
          rules: z
            .array(
              z.object({ name: z.string().optional(), backendRefs: z.array(backendRef).optional() }).loose(),
            )
            .optional(),
        })
        .loose(),
      /** Status is ours to write; accepted and ignored on input. */
      status: z.unknown().optional(),
    })
    .loose();
}

export const tcpRoute = streamRoute("TCPRoute");
export type TCPRoute = z.infer<typeof tcpRoute>;
export const udpRoute = streamRoute("UDPRoute");
export type UDPRoute = z.infer<typeof udpRoute>;
