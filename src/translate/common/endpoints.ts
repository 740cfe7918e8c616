import type { Endpoint } from "../../model/index.ts";
import type { EndpointSlice } from "../../sources/schema/core.ts";
import { arrayOf } from "./objects.ts";
import { compareStrings } from "./sort.ts";

/** The Service port being resolved, as the Service declares it. */
export interface ServicePortRef {
  readonly name?: string;
  readonly port: number;
  readonly targetPort?: number | string;
}

type SlicePort = NonNullable<EndpointSlice["ports"]>[number];

/**
 * The endpoint port a slice gives for a Service port. The EndpointSlice controller names slice ports
 * after the Service port ("" or null when unnamed) and puts the resolved container port in them, so that
 * is the match. As a fallback for hand-written slices, a slice port named like a string targetPort
 * (a container port name) is accepted too. A slice without ports (or a port without a number, meaning
 * "not restricted") falls back to a numeric targetPort, or the Service port when targetPort is absent.
 */
export function slicePortFor(slice: EndpointSlice, servicePort: ServicePortRef): number | undefined {
  const ports = arrayOf(slice.ports);
  const wanted = servicePort.name ?? "";
  const target = servicePort.targetPort;
  const entry: SlicePort | undefined =
    ports.find((p) => (p.name ?? "") === wanted) ??
    (typeof target === "string" ? ports.find((p) => p.name === target) : undefined);
  if (entry === undefined && ports.length > 0) return undefined;
  if (typeof entry?.port === "number") return entry.port;
  if (typeof target === "number") return target;
  return target === undefined ? servicePort.port : undefined;
}

/**
 * The endpoints traffic for one Service port goes to, over all of the Service's slices: those whose
 * `conditions.ready` is not false (absent means ready, as the API documents); when none is ready, those
 * both serving and terminating, so a rollout that leaves only terminating pods still drains gracefully.
 * Only each endpoint's first address is used (the addresses of one endpoint are fungible, like
 * kube-proxy does). FQDN slices are skipped and returned so the caller can warn. The result is
 * de-duplicated by address and port and sorted.
 */
export function selectEndpoints(
  slices: readonly EndpointSlice[],
  servicePort: ServicePortRef,
): { endpoints: Endpoint[]; fqdnSlices: EndpointSlice[] } {
  const ready: Endpoint[] = [];
  const terminating: Endpoint[] = [];
  const fqdnSlices: EndpointSlice[] = [];
  for (const slice of slices) {
    if (slice.addressType === "FQDN") {
      fqdnSlices.push(slice);
      continue;
    }
    const port = slicePortFor(slice, servicePort);
    if (port === undefined) continue;
    for (const ep of arrayOf(slice.endpoints)) {
      const address = arrayOf(ep?.addresses)[0];
      if (typeof address !== "string" || address === "") continue;
      const ref = ep.targetRef;
      const pod = ref?.name && (ref.kind === undefined || ref.kind === "Pod") ? ref.name : undefined;
      const endpoint: Endpoint = pod ? { address, port, pod } : { address, port };
      const c = ep.conditions;
      if (c?.ready !== false) ready.push(endpoint);
      else if (c.serving === true && c.terminating === true) terminating.push(endpoint);
    }
  }
  return { endpoints: dedupeSorted(ready.length > 0 ? ready : terminating), fqdnSlices };
}

function dedupeSorted(endpoints: readonly Endpoint[]): Endpoint[] {
  const sorted = [...endpoints].sort(
    (a, b) =>
      compareStrings(a.address, b.address) || a.port - b.port || compareStrings(a.pod ?? "", b.pod ?? ""),
  );
  return sorted.filter((e, i) => {
    const prev = sorted[i - 1];
    return !prev || prev.address !== e.address || prev.port !== e.port;
  });
}
