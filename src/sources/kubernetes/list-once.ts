/**
 * The cluster's objects read once, for `gatehouse routes --kube` and `translate --kube` (and so
 * `kubectl gatehouse …`): every kind the Kubernetes source watches is listed (pages of 500), then only the
 * Secrets and ConfigMaps some object names are fetched one by one, as the source keeps them: a command
 * run by a person should not pull every Secret of the cluster into memory. Nothing is watched, no status
 * is written. A kind that is not installed (404) counts as empty; one the caller may not list (403) counts
 * as empty and is named in `unavailable`, so the caller can say what the answer is missing.
 */

import type { KnownKind } from "../schema/index.ts";
import type { ResourceSnapshot, UnreadableObject } from "../snapshot.ts";
import { assembleSnapshot, type InvalidObject, referencedConfigMaps, referencedSecrets } from "./assemble.ts";
import { describeFailure, type KubeClient } from "./client.ts";
import { type ApiResource, apiVersionOf, resourcePath, watchedResources } from "./resources.ts";

export interface ClusterRead {
  readonly snapshot: ResourceSnapshot;
  readonly invalid: readonly InvalidObject[];
  /** `Kind: why` for each kind (or referenced object) that could not be read. */
  readonly unavailable: readonly string[];
}

type Raw = Record<string, unknown>;

async function listAll(client: KubeClient, r: ApiResource): Promise<Raw[] | string> {
  const items: Raw[] = [];
  let next: string | undefined;
  do {
    const q = new URLSearchParams({ limit: "500" });
    if (next) q.set("continue", next);
    const res = await client.get(`${resourcePath(r)}?${q}`, 30_000);
    if (res.status === 404 && next === undefined) return [];
    if (res.status !== 200) return describeFailure(res);
    const body = res.body as { items?: Raw[]; metadata?: { continue?: string } };
    // List items carry no kind or apiVersion; the schemas need both.
    for (const item of body.items ?? []) items.push({ ...item, kind: r.kind, apiVersion: apiVersionOf(r) });
    next = body.metadata?.continue || undefined;
  } while (next);
  return items;
}

/**
 * Every `ns/name` in `keys` of kind `r`, fetched one by one; a missing one is simply absent, one that
 * could not be read is named in `unavailable` and `unreadable`.
 */
async function fetchNamed(
  client: KubeClient,
  r: ApiResource & { kind: UnreadableObject["kind"] },
  keys: Iterable<string>,
  unavailable: string[],
  unreadable: UnreadableObject[],
) {
  const out: Raw[] = [];
  for (const key of keys) {
    const [namespace = "", name = ""] = key.split("/");
    const res = await client.get(resourcePath(r, namespace, name));
    if (res.status === 200) out.push({ ...(res.body as Raw), kind: r.kind, apiVersion: apiVersionOf(r) });
    else if (res.status !== 404) {
      unavailable.push(`${r.kind} ${key}: ${describeFailure(res)}`);
      unreadable.push({ kind: r.kind, namespace, name, why: `reading it failed: ${describeFailure(res)}` });
    }
  }
  return out;
}

/** Reads the cluster once. `alwaysSecrets`: Secrets to fetch though no object names them (the default certificate). */
export async function readClusterOnce(
  client: KubeClient,
  alwaysSecrets: readonly string[] = [],
): Promise<ClusterRead> {
  const unavailable: string[] = [];
  const objects = {} as Record<KnownKind, Raw[]>;
  for (const [kind, r] of Object.entries(watchedResources) as [KnownKind, ApiResource][]) {
    if (kind === "Secret" || kind === "ConfigMap") {
      objects[kind] = [];
      continue;
    }
    const got = await listAll(client, r);
    if (typeof got === "string") unavailable.push(`${kind}: ${got}`);
    objects[kind] = typeof got === "string" ? [] : got;
  }
  const first = assembleSnapshot(objects, () => false, new Map());
  const secrets = referencedSecrets(first.snapshot, alwaysSecrets);
  const unreadable: UnreadableObject[] = [];
  const secret = { ...watchedResources.Secret, kind: "Secret" as const };
  const configMap = { ...watchedResources.ConfigMap, kind: "ConfigMap" as const };
  objects.Secret = await fetchNamed(client, secret, secrets, unavailable, unreadable);
  const configMaps = referencedConfigMaps(first.snapshot.ingresses, first.snapshot.gateways);
  objects.ConfigMap = await fetchNamed(client, configMap, configMaps, unavailable, unreadable);
  const { snapshot, invalid } = assembleSnapshot(objects, () => true, new Map());
  return { snapshot: unreadable.length > 0 ? { ...snapshot, unreadable } : snapshot, invalid, unavailable };
}
