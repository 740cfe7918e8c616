import type { ReferenceGrant } from "../../sources/schema/gateway.ts";
import { arrayOf, namespaceOf } from "./objects.ts";

/** One side of a reference: who refers (`from`) or what is referred to (`to`). */
export interface RefEnd {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
}

/**
 * Whether `from` may refer to the object `to`/`name`. Same-namespace references are always allowed;
 * a cross-namespace one needs a ReferenceGrant in the target's namespace listing `from` (group, kind,
 * namespace) and `to` (group, kind, and a name that is absent or equal). Groups compare with "" for core.
 */
export function referenceAllowed(
  grants: readonly ReferenceGrant[],
  from: RefEnd,
  to: RefEnd,
  name: string,
): boolean {
  if (from.namespace === to.namespace) return true;
  return arrayOf(grants).some(
    (g) =>
      namespaceOf(g) === to.namespace &&
      arrayOf(g.spec?.from).some(
        (f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace,
      ) &&
      arrayOf(g.spec?.to).some(
        (t) =>
          t.group === to.group &&
          t.kind === to.kind &&
          (t.name === undefined || t.name === "" || t.name === name),
      ),
  );
}
