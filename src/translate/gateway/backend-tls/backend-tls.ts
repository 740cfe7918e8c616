/**
 * The BackendTLSPolicy stage of the Gateway API half (gateway.ts runs it last, on its listeners and
 * backends): TLS to the backends the policies target, the Gateways' backend client certificates, and the
 * policies' statuses and problems. apply.ts rewrites the model, status.ts reports.
 */
import type { Backend, Listener, PassthroughListener, Problem } from "../../../model/index.ts";
import type { ResourceSnapshot } from "../../../sources/snapshot.ts";
import type { ObjectStatus } from "../../../status/types.ts";
import { arrayOf } from "../../common/objects.ts";
import type { SnapshotIndex } from "../../common/snapshot-index.ts";
import type { BackendClientCertificate } from "../gateway-tls.ts";
import { applyBackendTLS } from "./apply.ts";
import type { CAConfigMaps } from "./policy.ts";
import { backendTLSPolicyStatuses } from "./status.ts";

export interface BackendTLSStage {
  readonly listeners: Listener[];
  readonly backends: Backend[];
  /** One per BackendTLSPolicy, by namespace/name. */
  readonly statuses: ObjectStatus[];
  readonly problems: Problem[];
}

export function translateBackendTLS(
  model: {
    readonly listeners: readonly Listener[];
    readonly passthroughListeners: readonly PassthroughListener[];
    readonly backends: readonly Backend[];
  },
  snapshot: ResourceSnapshot,
  index: SnapshotIndex,
  sources: CAConfigMaps,
  gateways: ReadonlyMap<string, { readonly backendClient: BackendClientCertificate | undefined }>,
  controllerName: string,
): BackendTLSStage {
  const policies = arrayOf(snapshot?.backendTLSPolicies).filter((p) => p?.metadata);
  // Nothing asks for TLS to a backend (the common case; a client certificate alone is for TLS backends only).
  if (policies.length === 0)
    return { listeners: [...model.listeners], backends: [...model.backends], statuses: [], problems: [] };
  // Per Gateway `<ns>/<name>` with `spec.tls.backend.clientCertificateRef`: its certificate, or undefined
  // when the reference is bad (gateway-tls.ts).
  const clientCertificates = new Map(
    [...gateways].flatMap(([k, g]) => (g.backendClient ? [[k, g.backendClient.certificate] as const] : [])),
  );
  const applied = applyBackendTLS(model, index, sources, clientCertificates);
  const { statuses, problems } = backendTLSPolicyStatuses(policies, applied.uses, index, controllerName);
  return { listeners: applied.listeners, backends: applied.backends, statuses, problems };
}
