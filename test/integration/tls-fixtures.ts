/**
 * YAML for the TLS integration tests: a TLS Secret from PEMs, an Ingress with `spec.tls`, and an echo
 * Service with its EndpointSlice, all in namespace `demo`.
 */
import type { TLSCertificate } from "../../src/model/types.ts";

export function tlsSecretYaml(name: string, cert: Pick<TLSCertificate, "certPem" | "keyPem">): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return `apiVersion: v1
kind: Secret
metadata: { name: ${name}, namespace: demo }
type: kubernetes.io/tls
data: { tls.crt: ${b64(cert.certPem)}, tls.key: ${b64(cert.keyPem)} }
`;
}

/** An Ingress for `host` to Service `echo`; `tls` lists `[hosts, secretName]` entries. */
export function tlsIngressYaml(
  name: string,
  host: string,
  tls: readonly (readonly [readonly string[], string])[],
  annotations: Record<string, string> = {},
): string {
  const ann = Object.entries(annotations)
    .map(([k, v]) => `${k}: "${v}"`)
    .join(", ");
  const tlsYaml = tls.length
    ? `  tls:\n${tls.map(([hosts, secret]) => `    - { hosts: [${hosts.join(", ")}], secretName: ${secret} }\n`).join("")}`
    : "";
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: demo, annotations: { ${ann} } }
spec:
  ingressClassName: gatehouse
${tlsYaml}  rules:
    - host: ${host}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }
`;
}

export function echoServiceYaml(echoPort: number): string {
  return `apiVersion: v1
kind: Service
metadata: { name: echo, namespace: demo }
spec: { ports: [{ name: http, port: 80, targetPort: 8000 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: echo-1, namespace: demo, labels: { kubernetes.io/service-name: echo } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${echoPort} }]
`;
}
