import type { EndpointSlice, Secret, Service } from "./schema/core.ts";
import type { Ingress, IngressClass } from "./schema/networking.ts";

/**
 * Everything the sources know, frozen at one moment. Both the folder source and the Kubernetes source
 * produce this, so translation has one code path. Objects here passed schema validation; objects that
 * did not are reported by the source and left out.
 */
export interface ResourceSnapshot {
  readonly ingressClasses: readonly IngressClass[];
  readonly ingresses: readonly Ingress[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly secrets: readonly Secret[];
}

/** A snapshot with nothing in it: what the gateway serves before its first source sync. */
export const emptySnapshot: ResourceSnapshot = {
  ingressClasses: [],
  ingresses: [],
  services: [],
  endpointSlices: [],
  secrets: [],
};
