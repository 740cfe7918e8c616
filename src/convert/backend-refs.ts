/** Model backends as HTTPRoute backendRefs: the Service and port number a backend id stands for. */
import type { GatewayModel } from "../model/index.ts";

type Json = Record<string, unknown>;

/**
 * The backendRef of model backend `id`, or why there is none: a `service-upstream` backend (the cluster
 * IP) has no Gateway API field, and an id that is not in the model named no usable Service.
 */
export function backendRefOf(id: string, model: GatewayModel, routeNamespace: string): Json | string {
  const backend = model.backends[id];
  if (backend === undefined) return `backend ${id} is not a resolvable Service port`;
  if (id.endsWith("@cluster-ip"))
    return `backend ${id}: sending to the Service's cluster IP (service-upstream) has no Gateway API field`;
  const { namespace, name, port } = backend.service;
  return { name, ...(namespace !== routeNamespace ? { namespace } : {}), port };
}
