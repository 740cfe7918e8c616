/**
 * The echo "pods" of the Gateway API suite: one echo server per Deployment the included tests reference
 * (POD_NAME `<deployment>-local-0`, NAMESPACE set), started once for the whole run, and the EndpointSlices
 * that point each Service at them. Service ports resolve as the README maps them: targetPort 3000 → the
 * echo's HTTP port, 3001 → its h2c port. Services nothing runs for (nonexistent, tls-backend, …) get no
 * endpoints, so they stay unresolvable.
 */
import { type EchoServer, startEchoServer, startH2cEchoServer } from "../helpers/echo-server.ts";
import { type ServiceData, splitRef } from "./gateway-api-data.ts";
import type { K8sObject, Placed } from "./gateway-api-manifests.ts";

const h2cTargetPort = 3001;

export interface EchoPod {
  /** `ns/deployment` */
  readonly deployment: string;
  readonly pod: string;
  readonly http: EchoServer;
  readonly h2c?: EchoServer;
  /** Every `Echoing back request made to …` line, in order (both ports). */
  readonly logs: string[];
}

export interface EchoFleet {
  readonly pods: ReadonlyMap<string, EchoPod>;
  /** The folder's objects with EndpointSlices added for every Service that selects a pod, and the
   * manifests' empty "manual" slices filled in (upstream's setup step for HTTPRouteServiceTypes). */
  withEndpoints(objects: readonly Placed[]): Placed[];
  stop(): Promise<void>;
}

export async function startEchoFleet(services: readonly ServiceData[]): Promise<EchoFleet> {
  const pods = new Map<string, EchoPod>();
  const podNames = new Map<string, string>(); // service ref → deployment ref (from the data)
  for (const svc of services) {
    if (!svc.referencedByIncludedTests) continue;
    const { namespace } = splitRef(svc.ref);
    const deployment = `${namespace}/${svc.podNamePrefix}`;
    podNames.set(svc.ref, deployment);
    const needsH2c = svc.ports.some((p) => p.targetPort === h2cTargetPort);
    const existing = pods.get(deployment);
    if (existing && (existing.h2c || !needsH2c)) continue;
    const logs = existing?.logs ?? [];
    const options = {
      namespace,
      pod: `${svc.podNamePrefix}-local-0`,
      service: splitRef(svc.ref).name,
      onLog: (line: string) => logs.push(line),
    };
    const http = existing?.http ?? startEchoServer(options);
    const h2c = needsH2c ? await startH2cEchoServer(options) : undefined;
    pods.set(deployment, { deployment, pod: options.pod, http, ...(h2c ? { h2c } : {}), logs });
  }

  const portFor = (pod: EchoPod, targetPort: number) =>
    targetPort === h2cTargetPort ? pod.h2c?.port : pod.http.port;

  return {
    pods,
    withEndpoints(objects) {
      const out: Placed[] = [];
      for (const placed of objects) {
        const o = placed.object;
        if (o.kind === "EndpointSlice") {
          out.push(fillManualSlice(placed, pods, podNames, portFor));
          continue;
        }
        out.push(placed);
        if (o.kind !== "Service") continue;
        const app = (o.spec?.selector as Record<string, string> | undefined)?.app;
        const pod = app ? pods.get(`${o.metadata.namespace}/${app}`) : undefined;
        if (!pod) continue;
        const ports = ((o.spec?.ports ?? []) as ServicePort[]).flatMap((p) => {
          const port = portFor(pod, Number(p.targetPort ?? p.port));
          return port ? [slicePort(p.name, port, p.appProtocol)] : [];
        });
        out.push({
          file: "generated-endpoints.yaml",
          object: slice(o, `${o.metadata.name}-local`, pod, ports),
        });
      }
      return out;
    },
    async stop() {
      await Promise.all([...pods.values()].flatMap((p) => [p.http.stop(), p.h2c?.stop()]));
    },
  };
}

interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

/** A manifest's IPv4 slice with no endpoints, for a Service the data maps to a pod: point it at the pod. */
function fillManualSlice(
  placed: Placed,
  pods: ReadonlyMap<string, EchoPod>,
  podNames: ReadonlyMap<string, string>,
  portFor: (pod: EchoPod, targetPort: number) => number | undefined,
): Placed {
  const o = placed.object;
  const service = o.metadata.labels?.["kubernetes.io/service-name"];
  const deployment = service ? podNames.get(`${o.metadata.namespace}/${service}`) : undefined;
  const pod = deployment ? pods.get(deployment) : undefined;
  const endpoints = o.endpoints as unknown[] | undefined;
  if (!pod || o.addressType !== "IPv4" || (endpoints && endpoints.length > 0)) return placed;
  const ports = ((o.ports ?? []) as ServicePort[]).flatMap((p) => {
    const port = portFor(pod, p.port);
    return port ? [slicePort(p.name, port, p.appProtocol)] : [];
  });
  return { file: placed.file, object: { ...o, endpoints: endpointsOf(pod), ports } };
}

function slice(service: K8sObject, name: string, pod: EchoPod, ports: unknown[]): K8sObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace: service.metadata.namespace as string,
      generation: 1,
      labels: { "kubernetes.io/service-name": service.metadata.name },
    },
    addressType: "IPv4",
    endpoints: endpointsOf(pod),
    ports,
  };
}

function endpointsOf(pod: EchoPod) {
  return [
    {
      addresses: ["127.0.0.1"],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: "Pod", namespace: splitRef(pod.deployment).namespace, name: pod.pod },
    },
  ];
}

function slicePort(name: string | undefined, port: number, appProtocol: string | undefined) {
  return { name: name ?? "", port, protocol: "TCP", ...(appProtocol ? { appProtocol } : {}) };
}
