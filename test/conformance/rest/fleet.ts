/**
 * The echo "pods" of `gateway-api-rest`: one per Deployment (`<namespace>/<app label>`) that a referenced
 * Service selects, in the mode the data names (`echoMode`), each port where upstream's pod listens:
 * http — 3000 HTTP, 3001 h2c, 8443 HTTPS with its certificate (and client CA); grpc — 3000; tcp — 3000 and
 * 8443 over TLS; udp — 8080; coredns — 53 (a DNS responder). Started once per run; the EndpointSlices
 * point each Service's target ports at them. Services no pod serves stay without endpoints.
 */
import { dnsResponderPort, startDnsResponder } from "../../helpers/dns-responder.ts";
import { startEchoServer, startH2cEchoServer } from "../../helpers/echo-server.ts";
import { startGrpcEchoServer } from "../../helpers/grpc-echo-server.ts";
import { startTcpEchoServer } from "../../helpers/tcp-echo-server.ts";
import { startTlsEchoServer } from "../../helpers/tls-echo-server.ts";
import { startUdpEchoServer } from "../../helpers/udp-echo-server.ts";
import { splitRef } from "../gateway-api-data.ts";
import type { K8sObject, Placed } from "../gateway-api-manifests.ts";
import type { Certificate } from "./certificates.ts";
import type { RestServiceData } from "./data.ts";

export interface RestPod {
  /** `ns/app` */
  readonly key: string;
  readonly pod: string;
  /** Upstream container port → where it listens here, and its protocol. */
  readonly ports: ReadonlyMap<number, { port: number; protocol: "TCP" | "UDP" }>;
}

export interface RestFleet {
  readonly pods: ReadonlyMap<string, RestPod>;
  withEndpoints(objects: readonly Placed[]): Placed[];
  stop(): Promise<void>;
}

export async function startRestFleet(
  services: readonly RestServiceData[],
  certs: ReadonlyMap<string, Certificate>,
): Promise<RestFleet> {
  const pods = new Map<string, RestPod>();
  const stops: (() => unknown)[] = [];
  const specs = new Map<string, RestServiceData[]>();
  for (const svc of services) {
    if (!svc.referencedByIncludedTests || !svc.podNamePrefix || !svc.selectorApp) continue;
    const key = `${splitRef(svc.ref).namespace}/${svc.selectorApp}`;
    specs.set(key, [...(specs.get(key) ?? []), svc]);
  }
  try {
    for (const [key, svcs] of specs) pods.set(key, await startPod(key, svcs, certs, stops));
  } catch (err) {
    await Promise.all(stops.map((s) => s()));
    throw err;
  }
  return {
    pods,
    withEndpoints: (objects) => objects.flatMap((p) => [p, ...sliceFor(p.object, pods)]),
    async stop() {
      await Promise.all(stops.map((s) => s()));
    },
  };
}

async function startPod(
  key: string,
  svcs: readonly RestServiceData[],
  certs: ReadonlyMap<string, Certificate>,
  stops: (() => unknown)[],
): Promise<RestPod> {
  const first = svcs[0] as RestServiceData;
  const namespace = splitRef(key).namespace;
  const pod = `${first.podNamePrefix}-local-0`;
  const env = (first as { env?: Record<string, string> }).env ?? {};
  const context = { namespace, pod, service: env.SERVICE_NAME ?? splitRef(first.ref).name };
  const targets = new Set(svcs.flatMap((s) => s.ports.map((p) => p.targetPort)));
  const certRef = svcs.find((s) => s.tlsServerCertificate)?.tlsServerCertificate;
  const cert = certRef ? certs.get(certRef) : undefined;
  if (certRef && !cert) throw new Error(`${key}: certificate ${certRef} was not made`);
  const caRef = svcs.find((s) => s.tlsClientCAConfigMap)?.tlsClientCAConfigMap;
  const ports = new Map<number, { port: number; protocol: "TCP" | "UDP" }>();
  const tcp = (target: number, port: number) => ports.set(target, { port, protocol: "TCP" });
  switch (first.echoMode ?? "http") {
    case "http": {
      const http = startEchoServer(context);
      stops.push(() => http.stop());
      tcp(3000, http.port);
      if (targets.has(3001)) {
        const h2c = await startH2cEchoServer(context);
        stops.push(() => h2c.stop());
        tcp(3001, h2c.port);
      }
      if (cert) {
        const clientCA = caRef ? certs.get(caRef)?.certPem : undefined;
        const https = await startTlsEchoServer({ ...context, ...cert, ...(clientCA ? { clientCA } : {}) });
        stops.push(() => https.stop());
        tcp(8443, https.port);
      }
      break;
    }
    case "grpc": {
      const grpc = await startGrpcEchoServer(context);
      stops.push(() => grpc.stop());
      tcp(3000, grpc.port);
      break;
    }
    case "tcp": {
      const server = await startTcpEchoServer({ ...context, ...(cert ? { tls: cert } : {}) });
      stops.push(() => server.stop());
      tcp(3000, server.port);
      if (server.tlsPort !== undefined) tcp(8443, server.tlsPort);
      break;
    }
    case "udp": {
      const udp = await startUdpEchoServer(context);
      stops.push(() => udp.stop());
      ports.set(8080, { port: udp.port, protocol: "UDP" });
      break;
    }
    case "coredns": {
      const dns = await startDnsResponder();
      stops.push(() => dns.stop());
      ports.set(dnsResponderPort, { port: dns.port, protocol: "UDP" });
      break;
    }
  }
  return { key, pod, ports };
}

interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
  appProtocol?: string;
}

/** The EndpointSlice of a Service whose selector names a pod of the fleet (none otherwise). */
function sliceFor(service: K8sObject, pods: ReadonlyMap<string, RestPod>): Placed[] {
  if (service.kind !== "Service") return [];
  const app = (service.spec?.selector as Record<string, string> | undefined)?.app;
  const pod = app ? pods.get(`${service.metadata.namespace}/${app}`) : undefined;
  if (!pod) return [];
  const ports = ((service.spec?.ports ?? []) as ServicePort[]).flatMap((p) => {
    const served = pod.ports.get(Number(p.targetPort ?? p.port));
    if (!served || served.protocol !== (p.protocol ?? "TCP")) return [];
    return [
      {
        name: p.name ?? "",
        port: served.port,
        protocol: served.protocol,
        ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
      },
    ];
  });
  const namespace = service.metadata.namespace as string;
  const object: K8sObject = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service.metadata.name}-local`,
      namespace,
      generation: 1,
      labels: { "kubernetes.io/service-name": service.metadata.name },
    },
    addressType: "IPv4",
    endpoints: [
      {
        addresses: ["127.0.0.1"],
        conditions: { ready: true, serving: true, terminating: false },
        targetRef: { kind: "Pod", namespace, name: pod.pod },
      },
    ],
    ports,
  };
  return [{ file: "generated-endpoints.yaml", object }];
}
