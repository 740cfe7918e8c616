/**
 * The mutations of phased tests (cases.json `mutations[]`), applied to the folder's objects the way the
 * upstream test patches or deletes them through the API server. The data describes each patch in prose;
 * the three shapes it uses are parsed here, and anything else is an error rather than a silent no-op.
 */
import type { Mutation } from "./gateway-api-data.ts";
import { findObject, type K8sObject, type Placed } from "./gateway-api-manifests.ts";

/** The objects after `m`; a patched object gets a new generation (its spec changed). */
export function applyMutation(objects: readonly Placed[], m: Mutation): Placed[] {
  const found = findObject(objects, m.kind, m.ref);
  if (!found) throw new Error(`mutation: ${m.kind} ${m.ref} is not in the folder`);
  if (m.op === "delete") return objects.filter((p) => p !== found);
  const patched = structuredClone(found.object);
  patchObject(patched, m.description ?? "");
  patched.metadata.generation = (patched.metadata.generation ?? 1) + 1;
  return objects.map((p) => (p === found ? { file: p.file, object: patched } : p));
}

/** Apply one prose patch in place; throws on a description it does not understand. */
export function patchObject(o: K8sObject, description: string): void {
  o.spec ??= {};
  const spec = o.spec;
  const append = /^append listener \{(.*)\}$/.exec(description);
  if (append) {
    spec.listeners = [...((spec.listeners ?? []) as unknown[]), parseFlowFields(append[1] ?? "")];
    return;
  }
  const remove = /^remove listener '([^']+)'/.exec(description);
  if (remove) {
    const listeners = (spec.listeners ?? []) as { name?: string }[];
    if (!listeners.some((l) => l.name === remove[1])) throw new Error(`no listener ${remove[1]} to remove`);
    spec.listeners = listeners.filter((l) => l.name !== remove[1]);
    return;
  }
  const assign = /^([\w.[\]]+) = (\S+)$/.exec(description);
  if (assign) {
    setPath(o, assign[1] ?? "", assign[2] ?? "");
    return;
  }
  throw new Error(`mutation description not understood: ${description}`);
}

/** `name: http, port: 80, allowedRoutes.namespaces.from: All` → nested object; digits become numbers. */
function parseFlowFields(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const part of text.split(",")) {
    const i = part.indexOf(":");
    if (i < 0) throw new Error(`bad field "${part}"`);
    const keys = part.slice(0, i).trim().split(".");
    const raw = part.slice(i + 1).trim();
    let node = out;
    for (const k of keys.slice(0, -1)) {
      node[k] ??= {};
      node = node[k] as Record<string, unknown>;
    }
    node[keys.at(-1) as string] = /^\d+$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

/** `spec.rules[0].backendRefs[0].name` = value, through existing objects and arrays only. */
function setPath(root: unknown, path: string, value: string): void {
  const steps = path.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== "");
  let node = root as Record<string, unknown>;
  for (const step of steps.slice(0, -1)) {
    const next = node[step];
    if (next === null || typeof next !== "object") throw new Error(`${path}: no ${step}`);
    node = next as Record<string, unknown>;
  }
  node[steps.at(-1) as string] = value;
}
