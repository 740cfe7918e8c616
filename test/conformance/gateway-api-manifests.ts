/**
 * The folder a Gateway API test runs against: the base manifests, the test's manifests (in order) and the
 * objects a cluster would have made (GatewayClass, EndpointSlices, TLS Secrets), as YAML files the
 * gateway's folder source reads. Every object gets `metadata.generation` (1, bumped by spec mutations) and
 * a `creationTimestamp` (second precision) as the API server would, so observedGeneration checks mean
 * something and "the oldest route wins" compares a route made by a later mutation with one that was read
 * at setup, as in a cluster.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";

/** The GatewayClass every manifest's `{GATEWAY_CLASS_NAME}` becomes. */
export const gatewayClassName = "gatehouse-conformance";
export const gatewayController = "gatehouse.dev/gateway-controller";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

/** An object and the folder file it is written to. */
export interface Placed {
  readonly file: string;
  readonly object: K8sObject;
}

/** Parse one manifest file of the data set into objects, class name substituted, generation 1, created now. */
export async function readManifest(dir: string, relative: string): Promise<K8sObject[]> {
  const text = (await readFile(join(dir, "manifests", relative), "utf8")).replaceAll(
    "{GATEWAY_CLASS_NAME}",
    gatewayClassName,
  );
  const objects: K8sObject[] = [];
  const created = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`${relative}: ${doc.errors[0]?.message}`);
    const o = doc.toJS() as K8sObject | null;
    if (!o) continue;
    o.metadata.generation ??= 1;
    o.metadata.creationTimestamp ??= created;
    objects.push(o);
  }
  return objects;
}

export function gatewayClassObject(): K8sObject {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name: gatewayClassName, generation: 1 },
    spec: { controllerName: gatewayController },
  };
}

/** `ns/name` of an object (cluster-scoped: `name`). */
export function refOf(o: K8sObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

export function findObject(objects: readonly Placed[], kind: string, ref: string): Placed | undefined {
  return objects.find((p) => p.object.kind === kind && refOf(p.object) === ref);
}

/**
 * Write each file of `objects` into `folder`, and remove files that no longer hold anything. Files are
 * written whole (write to the final name: the folder source re-reads what changed after its debounce).
 */
export async function writeFolder(
  folder: string,
  objects: readonly Placed[],
  previousFiles: readonly string[] = [],
): Promise<string[]> {
  const byFile = new Map<string, K8sObject[]>();
  for (const p of objects) byFile.set(p.file, [...(byFile.get(p.file) ?? []), p.object]);
  for (const f of previousFiles) if (!byFile.has(f)) await rm(join(folder, f), { force: true });
  for (const [file, docs] of byFile)
    await writeFile(join(folder, file), docs.map((d) => stringify(d)).join("---\n"));
  return [...byFile.keys()];
}
