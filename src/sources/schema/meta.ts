import { z } from "zod";
import { openObject } from "./unknown-fields.ts";

/**
 * ObjectMeta as far as Gatehouse reads it. Extra keys (uid, managedFields, …) are allowed because the
 * API server adds them; what we do not read we do not judge (`openObject`: not reported as unknown fields).
 */
export const objectMeta = openObject(
  z
    .object({
      name: z.string().min(1),
      namespace: z.string().optional(),
      labels: z.record(z.string(), z.string()).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
      /** RFC 3339; used to break ties (oldest wins). Absent in folder mode: ties then go by namespace/name. */
      creationTimestamp: z.union([z.string(), z.date()]).optional(),
      generation: z.number().int().optional(),
      resourceVersion: z.string().optional(),
      uid: z.string().optional(),
    })
    .loose(),
);

export type ObjectMeta = z.infer<typeof objectMeta>;

/** `apiVersion`, `kind` and `metadata` of a typed object, with a strict spec given by the caller. */
export function typedObject<K extends string, S extends z.ZodType>(
  apiVersions: readonly string[],
  kind: K,
  spec: S,
) {
  return z
    .object({
      apiVersion: z.enum(apiVersions as [string, ...string[]]),
      kind: z.literal(kind),
      metadata: objectMeta,
      spec,
      /** Status is written by controllers; accepted and ignored on input. */
      status: z.unknown().optional(),
    })
    .strict();
}
