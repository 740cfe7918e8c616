/**
 * The `scale` subresource of apps/v1 Deployments and StatefulSets, for activation (proxy/activation/,
 * docs/scale-to-zero.md). Each write is a JSON patch whose `test` op makes it conditional on the replicas
 * read or assumed, so it never undoes another writer: a wake raises 0 to 1 and nothing else (any replica
 * may send it, concurrently: one succeeds, the others' test fails, 422, which counts as "already awake"),
 * and a scale-down lowers exactly the count it read (a wake in between makes it fail). RBAC needs only
 * `get` and `patch` on `deployments/scale` and `statefulsets/scale` (deploy/rbac.yaml).
 */
import type { ScaleOutcome, WorkloadRef, WorkloadScaler } from "../../proxy/activation/scaler.ts";
import { describeFailure, type KubeClient, type KubeResponse } from "./client.ts";

const plural = { Deployment: "deployments", StatefulSet: "statefulsets" } as const;

/** Scale calls are on the wake's critical path: a hung API server must not eat the whole hold time. */
const CALL_MS = 5_000;

export function scalePath(w: WorkloadRef): string {
  return `/apis/apps/v1/namespaces/${encodeURIComponent(w.namespace)}/${plural[w.kind]}/${encodeURIComponent(w.name)}/scale`;
}

export class KubeWorkloadScaler implements WorkloadScaler {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  wake(w: WorkloadRef): Promise<ScaleOutcome> {
    return this.#setFrom(w, 0, 1);
  }

  async scaleToZero(w: WorkloadRef): Promise<ScaleOutcome> {
    const res = await this.#client.request("GET", scalePath(w), { timeoutMs: CALL_MS });
    if (res.status !== 200) return failed(w, res);
    const replicas = (res.body as { spec?: { replicas?: number } } | undefined)?.spec?.replicas ?? 0;
    if (replicas === 0) return { ok: true, changed: false };
    return this.#setFrom(w, replicas, 0);
  }

  async #setFrom(w: WorkloadRef, from: number, to: number): Promise<ScaleOutcome> {
    const res = await this.#client.request("PATCH", scalePath(w), {
      contentType: "application/json-patch+json",
      body: [
        { op: "test", path: "/spec/replicas", value: from },
        { op: "replace", path: "/spec/replicas", value: to },
      ],
      timeoutMs: CALL_MS,
    });
    if (res.status === 200) return { ok: true, changed: true };
    // The test op failed: someone else changed the replicas first (for a wake: it is awake or waking).
    if (res.status === 422 || res.status === 409) return { ok: true, changed: false };
    return failed(w, res);
  }
}

function failed(w: WorkloadRef, res: KubeResponse): ScaleOutcome {
  const what = `${w.kind} ${w.namespace}/${w.name}`;
  if (res.status === 403)
    return {
      ok: false,
      permanent: true,
      reason: `ScaleForbidden: the gateway may not scale ${what} (RBAC: get and patch on ${plural[w.kind]}/scale): ${describeFailure(res)}`,
    };
  if (res.status === 404)
    return { ok: false, permanent: true, reason: `WorkloadNotFound: ${what} does not exist` };
  return { ok: false, permanent: false, reason: `scale ${what}: ${describeFailure(res)}` };
}
