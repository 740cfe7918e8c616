/** Kubernetes objects for the `--kube` tests, as a client would create them. */
import type { Obj } from "./kube-api-server.ts";

export const ns = "demo";

export function service(name: string): Obj {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns },
    spec: {
      type: "ClusterIP",
      clusterIP: "10.96.0.10",
      ports: [{ name: "http", port: 80, targetPort: 8000 }],
    },
  };
}

/** An EndpointSlice of `service` with one endpoint per port (all on 127.0.0.1); `ready` per endpoint. */
export function slice(
  serviceName: string,
  ports: readonly number[],
  ready: readonly boolean[] = [],
  name = `${serviceName}-1`,
): Obj {
  // One slice holds one port list, so pods with different ports get one slice each (name suffix).
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace: ns, labels: { "kubernetes.io/service-name": serviceName } },
    addressType: "IPv4",
    endpoints: ports.length ? [{ addresses: ["127.0.0.1"], conditions: { ready: ready[0] ?? true } }] : [],
    ports: [{ name: "http", port: ports[0] ?? 1, protocol: "TCP" }],
  };
}

export function ingress(name: string, host: string, path: string, backend: string): Obj {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns },
    spec: {
      ingressClassName: "gatehouse",
      rules: [
        {
          host,
          http: {
            paths: [
              { path, pathType: "Prefix", backend: { service: { name: backend, port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

export function gatewayClass(name = "gatehouse"): Obj {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name },
    spec: { controllerName: "gatehouse.dev/gateway-controller" },
  };
}

export function gateway(name: string, port: number): Obj {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name, namespace: ns },
    spec: { gatewayClassName: "gatehouse", listeners: [{ name: "http", port, protocol: "HTTP" }] },
  };
}

export function httpRoute(name: string, gatewayName: string, host: string, backend: string): Obj {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name, namespace: ns },
    spec: {
      parentRefs: [{ name: gatewayName }],
      hostnames: [host],
      rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
    },
  };
}

/** GET through the gateway; `service` is the echo server's name when it answered. */
export async function probe(
  port: number,
  host: string,
  path = "/",
): Promise<{ status: number; service?: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { host } });
    const text = await res.text();
    const svc = res.headers.get("content-type")?.includes("json") ? JSON.parse(text).service : undefined;
    return { status: res.status, service: svc };
  } catch {
    return { status: 0 };
  }
}

/** Poll until `ok` (every 2 ms); returns the milliseconds it took, or throws after `ms`. */
export async function within(ms: number, ok: () => Promise<boolean> | boolean): Promise<number> {
  const start = performance.now();
  while (!(await ok())) {
    if (performance.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await Bun.sleep(2);
  }
  return performance.now() - start;
}

/** A `kubernetes.io/tls` Secret in `ns` from PEMs. */
export function tlsSecret(name: string, cert: { certPem: string; keyPem: string }): Obj {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(cert.certPem), "tls.key": b64(cert.keyPem) },
  };
}

/** A Gateway with one HTTPS listener per `[listener name, hostname, Secret name]`, all on `port`. */
export function httpsGateway(
  name: string,
  port: number,
  listeners: readonly [string, string, string][],
): Obj {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name, namespace: ns },
    spec: {
      gatewayClassName: "gatehouse",
      listeners: listeners.map(([l, hostname, secret]) => ({
        name: l,
        hostname,
        port,
        protocol: "HTTPS",
        tls: { mode: "Terminate", certificateRefs: [{ name: secret }] },
      })),
    },
  };
}

/** `ResolvedRefs` of each listener in a Gateway status, e.g. `{ a: "True", b: "False" }`. */
export function listenerRefs(status: Obj | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of status?.listeners ?? [])
    out[l.name] = l.conditions?.find((c: Obj) => c.type === "ResolvedRefs")?.status ?? "?";
  return out;
}
