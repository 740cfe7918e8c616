/**
 * The mutations of `gateway-api-rest` applied to the folder's objects: `create` (the data's object, with
 * its placeholders filled in), a patch with a JSON `mergePatch` (as upstream's `client.MergeFrom`), and the
 * first file's prose patches and deletes (gateway-api-mutations.ts). A patch that touches `spec` bumps
 * `metadata.generation`, as the API server does; a ConfigMap's data does not.
 */
import { findObject, type K8sObject, type Placed } from "../gateway-api-manifests.ts";
import { applyMutation } from "../gateway-api-mutations.ts";
import type { RestMutation } from "./data.ts";
import { mergePatch, type PlaceholderContext, substitute } from "./placeholders.ts";

export async function applyRestMutation(
  objects: readonly Placed[],
  m: RestMutation,
  ctx: PlaceholderContext,
): Promise<Placed[]> {
  // creationTimestamp has 1 s precision: upstream sleeps so the new route is strictly younger.
  if (m.sleepBeforeSeconds) await Bun.sleep(m.sleepBeforeSeconds * 1000);
  if (m.op === "create") {
    if (!m.object) throw new Error(`mutation: create ${m.kind} ${m.ref} without an object`);
    if (findObject(objects, m.kind, m.ref)) throw new Error(`mutation: ${m.kind} ${m.ref} exists already`);
    const object = substitute(m.object, ctx) as K8sObject;
    object.metadata = {
      ...object.metadata,
      generation: 1,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    } as K8sObject["metadata"];
    return [...objects, { file: "mutations.yaml", object }];
  }
  if (m.op === "patch" && m.mergePatch) {
    const found = findObject(objects, m.kind, m.ref);
    if (!found) throw new Error(`mutation: ${m.kind} ${m.ref} is not in the folder`);
    const patch = substitute(m.mergePatch, ctx) as Record<string, unknown>;
    const patched = mergePatch(structuredClone(found.object), patch) as K8sObject;
    if ("spec" in patch) patched.metadata.generation = (found.object.metadata.generation ?? 1) + 1;
    return objects.map((p) => (p === found ? { file: p.file, object: patched } : p));
  }
  return applyMutation(objects, { ...m, op: m.op as "patch" | "delete" });
}
