import { z } from "zod";
import { objectMeta } from "./meta.ts";

/**
 * TLSRoute (GEP-2643) as Gatehouse reads it: SNI hostnames, parentRefs and the backendRefs of its
 * rules. Served in three versions: `v1alpha2` (experimental channel until v1.4), `v1alpha3` (v1.3–v1.4)
 * and `v1` (standard channel since v1.5; the v1.6.1 conformance manifests use it). The fields we read
 * are the same in all three. Lenient like the other Gateway API schemas (gateway.ts): unknown fields
 * pass and values are judged by translation, which reports them through status conditions.
 */

const str = z.string();
const optStr = z.string().optional();
const int = z.number().int();

export const parentRef = z
  .object({
    group: optStr,
    kind: optStr,
    namespace: optStr,
    name: str,
    sectionName: optStr,
    port: int.optional(),
  })
  .loose();

export const backendRef = z
  .object({
    group: optStr,
    kind: optStr,
    name: str,
    namespace: optStr,
    port: int.optional(),
    weight: int.optional(),
  })
  .loose();

export const tlsRouteVersions = [
  "gateway.networking.k8s.io/v1",
  "gateway.networking.k8s.io/v1alpha3",
  "gateway.networking.k8s.io/v1alpha2",
] as const;

export const tlsRoute = z
  .object({
    apiVersion: z.enum(tlsRouteVersions),
    kind: z.literal("TLSRoute"),
    metadata: objectMeta,
    spec: z
      .object({
        parentRefs: z.array(parentRef).optional(),
        hostnames: z.array(str).optional(),
        rules: z
          .array(z.object({ name: optStr, backendRefs: z.array(backendRef).optional() }).loose())
          .optional(),
      })
      .loose(),
    /** Status is ours to write; accepted and ignored on input. */
    status: z.unknown().optional(),
  })
  .loose();
export type TLSRoute = z.infer<typeof tlsRoute>;
