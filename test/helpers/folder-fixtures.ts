/** Manifests for folder-source tests: the smallest configuration that routes traffic somewhere. */

/** An Ingress whose default backend is Service `name`, with one EndpointSlice on 127.0.0.1:`port`. */
export function defaultBackendYaml(name: string, port: number): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: default }
spec:
  ingressClassName: gatehouse
  defaultBackend: { service: { name: ${name}, port: { number: 80 } } }
---
apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: default }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: default, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1] }]
ports: [{ port: ${port} }]
`;
}

/** GatewayClass `gatehouse` of our Gateway controller. */
export const gatewayClassYaml = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
`;

/** Service `name` in `namespace` (port 80, named http) with one ready endpoint on 127.0.0.1:`port`. */
export function serviceYaml(name: string, namespace: string, port: number): string {
  return `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${namespace} }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: ${namespace}, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${port} }]
`;
}

/**
 * An Ingress with one Prefix `/` path on `host` to Service `service` port 80, carrying ingress-nginx
 * annotations (keys without the `nginx.ingress.kubernetes.io/` prefix).
 */
export function annotatedIngressYaml(o: {
  readonly name: string;
  readonly namespace: string;
  readonly host: string;
  readonly service: string;
  readonly annotations: Readonly<Record<string, string>>;
}): string {
  const prefixed = Object.fromEntries(
    // Gatehouse's own (`gatehouse.dev/…`) are kept as they are.
    Object.entries(o.annotations).map(([k, v]) => [
      k.startsWith("gatehouse.dev/") ? k : `nginx.ingress.kubernetes.io/${k}`,
      v,
    ]),
  );
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${o.name}, namespace: ${o.namespace}, annotations: ${JSON.stringify(prefixed)} }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${o.host}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: ${o.service}, port: { number: 80 } } } }
`;
}
