/**
 * The wake's short path: an EndpointSlice event for a Service whose backend is asleep with requests held
 * gives that backend its ready endpoints at once, without waiting for the debounce and a full translate
 * (which follow, and then compile the same endpoints into the table). Only ready endpoints count here:
 * a terminating pod of the last scale-down is no place to send a woken request.
 */
import type { EndpointSlice } from "../../sources/schema/core.ts";
import { selectEndpoints } from "../../translate/common/endpoints.ts";
import { endpointBase } from "../compile.ts";
import { sleepingActivators } from "./registry.ts";

const SERVICE_LABEL = "kubernetes.io/service-name";

interface SliceLike {
  readonly metadata?: { readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly endpoints?: readonly { readonly conditions?: { readonly ready?: boolean | null } | null }[] | null;
}

/** An EndpointSlice was added or changed (kube-source.ts `onEndpointSlice`). */
export function endpointSliceSeen(slice: SliceLike): void {
  const service = slice.metadata?.labels?.[SERVICE_LABEL];
  const namespace = slice.metadata?.namespace ?? "default";
  if (service === undefined) return;
  const sleeping = sleepingActivators(namespace, service);
  if (sleeping.length === 0) return;
  const seenAt = performance.now();
  const ready = {
    ...slice,
    endpoints: (slice.endpoints ?? []).filter((e) => e?.conditions?.ready !== false),
  } as unknown as EndpointSlice;
  for (const a of sleeping) {
    const { endpoints } = selectEndpoints([ready], a.config.servicePort);
    a.endpointsReady(
      endpoints.map((e) => endpointBase(e.address, e.port)),
      seenAt,
    );
  }
}
