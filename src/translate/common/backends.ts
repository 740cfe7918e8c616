import type { Backend, BackendProtocol, Problem } from "../../model/index.ts";
import type { Service } from "../../sources/schema/core.ts";
import { selectEndpoints } from "./endpoints.ts";
import { backendId } from "./names.ts";
import { arrayOf, nameOf, namespaceOf, sourceRef } from "./objects.ts";
import { problem } from "./problems.ts";
import type { SnapshotIndex } from "./snapshot-index.ts";

/** A Service port named by number or by name (Ingress `service.port`, HTTRoute `port`). */
/** A Service port by number or name, of protocol TCP unless `protocol` says UDP (UDPRoute backends). */
export type ServicePortSelector = ({ readonly number: number } | { readonly name: string }) & {
  readonly protocol?: "UDP";
};

/** Why a reference to a Service port cannot be served, for a Problem on the referring object. */
export interface BackendIssue {
  readonly reason: "BackendNotFound" | "UnsupportedBackend" | "PortNotFound";
  /** Which part of the reference is wrong: the Service or its port. */
  readonly subject: "service" | "port";
  readonly message: string;
}

export interface BackendLookup {
  readonly backend: Backend;
  readonly issue?: BackendIssue;
  /** Problems on other objects met on the way (FQDN EndpointSlices that were skipped). */
  readonly sideProblems: readonly Problem[];
}

type ServicePort = NonNullable<Service["spec"]["ports"]>[number];

/**
 * Resolve `<namespace>/<service>` and a port to a Backend: Service → Service port (TCP, or UDP when the
 * selector says so; by number or name) → EndpointSlice endpoints (see selectEndpoints). Never fails: a backend that cannot serve
 * carries `problem` (the data plane answers 503) and the lookup carries the issue to report. Depends only
 * on its arguments, so callers may cache it per (namespace, service, port) and share the Backend.
 */
export function lookupServiceBackend(
  index: SnapshotIndex,
  namespace: string,
  serviceName: string,
  selector: ServicePortSelector,
): BackendLookup {
  const asked = "number" in selector ? selector.number : selector.name;
  const broken = (problemKind: NonNullable<Backend["problem"]>, issue: BackendIssue): BackendLookup => ({
    backend: {
      id: backendId(namespace, serviceName, asked, selector.protocol),
      service: { namespace, name: serviceName, port: "number" in selector ? selector.number : 0 },
      protocol: "http",
      endpoints: [],
      problem: problemKind,
    },
    issue,
    sideProblems: [],
  });
  const svcKey = `${namespace}/${serviceName}`;
  const service = index.services.get(svcKey);
  if (!service) {
    return broken("ServiceNotFound", {
      reason: "BackendNotFound",
      subject: "service",
      message: `Service ${svcKey} not found`,
    });
  }
  if (service.spec?.type === "ExternalName") {
    return broken("ServiceNotFound", {
      reason: "UnsupportedBackend",
      subject: "service",
      message: `Service ${svcKey} is of type ExternalName, which Gatehouse does not forward to`,
    });
  }
  const port = findPort(service, selector);
  if (!port) {
    const what = "number" in selector ? `${selector.number}` : `named "${selector.name}"`;
    return broken("PortNotFound", {
      reason: "PortNotFound",
      subject: "port",
      message: `Service ${svcKey} has no ${selector.protocol ?? "TCP"} port ${what}`,
    });
  }
  const slices = index.slicesByService.get(svcKey) ?? [];
  const { endpoints, fqdnSlices } = selectEndpoints(slices, port);
  const backend: Backend = {
    id: backendId(namespace, serviceName, port.port, selector.protocol),
    service: { namespace, name: serviceName, port: port.port },
    protocol: protocolOf(port.appProtocol),
    endpoints,
    ...(endpoints.length === 0 ? { problem: "NoReadyEndpoints" as const } : {}),
  };
  const sideProblems = fqdnSlices.map((s) =>
    problem(
      sourceRef("EndpointSlice", s),
      "UnsupportedAddressType",
      `addressType "FQDN": FQDN endpoints are not supported; slice ${namespaceOf(s)}/${nameOf(s)} is ignored`,
      "warning",
    ),
  );
  return { backend, sideProblems };
}

function findPort(service: Service, selector: ServicePortSelector): ServicePort | undefined {
  const wanted = selector.protocol ?? "TCP";
  const ports = arrayOf(service.spec?.ports).filter((p) => (p.protocol ?? "TCP") === wanted);
  return "number" in selector
    ? ports.find((p) => p.port === selector.number)
    : ports.find((p) => p.name === selector.name);
}

/** From the Service port's appProtocol (the Kubernetes-defined values); anything else is plain HTTP/1.1. */
export function protocolOf(appProtocol: string | undefined): BackendProtocol {
  switch (appProtocol) {
    case "kubernetes.io/h2c":
      return "h2c";
    case "kubernetes.io/ws":
    case "kubernetes.io/wss":
      return "websocket";
    default:
      return "http";
  }
}
