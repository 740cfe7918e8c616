/**
 * The `scale` subresource of the test API server (apps/v1 Deployments and StatefulSets): GET answers an
 * `autoscaling/v1` Scale made from the workload; PATCH (any patch type kube-api-patch.ts knows, the JSON
 * patch `test` op included: a failed test is 422) and PUT change only `spec.replicas` of the workload,
 * with its resourceVersion bumped and a MODIFIED event, as the real server does.
 */
import { applyPatch } from "./kube-api-patch.ts";
import { ApiError, type Obj, type ResourceDef, type Store } from "./kube-api-store.ts";

export function scaleOf(obj: Obj): Obj {
  const m = obj.metadata ?? {};
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: obj.spec?.replicas ?? 1 },
    status: { replicas: obj.status?.replicas ?? 0 },
  };
}

export async function serveScale(
  store: Store,
  r: ResourceDef,
  namespace: string,
  name: string,
  req: Request,
): Promise<Response> {
  const current = store.get(r, namespace, name);
  if (req.method === "GET") return Response.json(scaleOf(current));
  let wanted: Obj;
  if (req.method === "PATCH")
    wanted = applyPatch(scaleOf(current), req.headers.get("content-type") ?? "", await req.text());
  else if (req.method === "PUT") wanted = (await req.json()) as Obj;
  else throw new ApiError(405, "MethodNotAllowed", `${req.method} is not allowed on scale`);
  const replicas = wanted.spec?.replicas;
  if (!Number.isInteger(replicas) || replicas < 0)
    throw new ApiError(
      422,
      "Invalid",
      `spec.replicas: must be a non-negative integer, got ${JSON.stringify(replicas)}`,
    );
  const rv = wanted.metadata?.resourceVersion;
  if (rv !== undefined && rv !== current.metadata?.resourceVersion)
    throw new ApiError(
      409,
      "Conflict",
      "the object has been modified; please apply your changes to the latest version",
    );
  if (replicas === (current.spec?.replicas ?? 1)) return Response.json(scaleOf(current));
  const updated = store.update(r, namespace, name, { ...current, spec: { ...current.spec, replicas } });
  return Response.json(scaleOf(updated));
}
