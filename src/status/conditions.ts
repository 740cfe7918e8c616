import type { Condition } from "./types.ts";

/**
 * A condition stamped with the object's generation. `observedGeneration` is left out when the object has
 * none (folder mode), since a made-up number would claim something we do not know.
 */
export function condition(
  type: string,
  ok: boolean,
  reason: string,
  message: string,
  generation: number | undefined,
): Condition {
  return {
    type,
    status: ok ? "True" : "False",
    reason,
    message,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** `metadata.generation` of an object when it is a number. */
export function generationOf(obj: {
  readonly metadata?: { readonly generation?: unknown };
}): number | undefined {
  const g = obj.metadata?.generation;
  return typeof g === "number" && Number.isInteger(g) ? g : undefined;
}
