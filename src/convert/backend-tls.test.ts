/**
 * convert's `backend-protocol`: TLS to a Service port as a BackendTLSPolicy with its CA ConfigMap, checked by
 * convert's own verification (the output translated again serves the same); what a BackendTLSPolicy
 * cannot say, and h2c, as findings.
 */
import { expect, test } from "bun:test";
import { loadCase } from "../../test/golden/load.ts";
import { convertIngresses } from "./convert.ts";

const CA_B64 =
  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJtekNDQVVDZ0F3SUJBZ0lVQ1l4aDl1cjA2THhTVkJBeklkZEYza0VQVXlzd0NnWUlLb1pJemowRUF3SXcKR3pFWk1CY0dBMVVFQXd3UVoyOXNaR1Z1TFdOc2FXVnVkQzFqWVRBZ0Z3MHlOakV4TWpVd05EQXlNelJhR0E4eQpNVEkyTVRFd01UQTBNREl6TkZvd0d6RVpNQmNHQTFVRUF3d1FaMjlzWkdWdUxXTnNhV1Z1ZEMxallUQlpNQk1HCkJ5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEEwSUFCRzhoMmJDeEd4L2xjRHNCUkJua2hFdkVmR0k4NnhVQUhidEQKWEtKRXRJWWZ3UDlOTW9TRG1PMUpELzBJbFc1cVl0ZG1QbklSOWhwRTlSMEcxVXdMamhLallEQmVNQjBHQTFVZApEZ1FXQkJUbVM3b2lDSzdwRDRzd1NIRnU4V3k3ZFZUYVVqQWZCZ05WSFNNRUdEQVdnQlRtUzdvaUNLN3BENHN3ClNIRnU4V3k3ZFZUYVVqQVBCZ05WSFJNQkFmOEVCVEFEQVFIL01Bc0dBMVVkRHdRRUF3SUNCREFLQmdncWhrak8KUFFRREFnTkpBREJHQWlFQW5Bb0d1aUtWTE9zUG9IcXplRGo3OTFTSm5CQ0ZTTE4vNHR5d3hpV3ExRUlDSVFEaQo1K2hJUDR6YXV5ZE1jYmlWYm9VY24vQWJYMmFBQnY0TzVrdW1WcGNzd3c9PQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==";

const ingress = (
  name: string,
  host: string,
  annotations: string,
  port = 443,
) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: shop, annotations: { ${annotations} } }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${host}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: api, port: { number: ${port} } } } }
---
`;

const base = `apiVersion: v1
kind: Secret
metadata: { name: backend-ca, namespace: shop }
type: Opaque
data: { ca.crt: ${CA_B64} }
---
apiVersion: v1
kind: Service
metadata: { name: api, namespace: shop }
spec: { ports: [{ name: https, port: 443 }, { name: grpc, port: 50051 }] }
`;

const convert = (yaml: string) =>
  convertIngresses(loadCase(yaml).snapshot, { translate: { httpPort: 80, httpsPort: 443 } });

test("HTTPS with proxy-ssl-secret and -name: a BackendTLSPolicy and its CA ConfigMap, verified the same", () => {
  const result = convert(
    ingress(
      "secure",
      "a.example.com",
      `nginx.ingress.kubernetes.io/backend-protocol: HTTPS, nginx.ingress.kubernetes.io/proxy-ssl-secret: shop/backend-ca, nginx.ingress.kubernetes.io/proxy-ssl-name: api.internal`,
    ) + base,
  );
  const policy = result.objects.find((o) => o.kind === "BackendTLSPolicy");
  expect(policy).toEqual({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    metadata: { name: "api-443-backend-tls", namespace: "shop" },
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: "api", sectionName: "https" }],
      validation: {
        hostname: "api.internal",
        caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "api-443-backend-ca" }],
      },
    },
  });
  const configMap = result.objects.find((o) => o.kind === "ConfigMap") as { data: Record<string, string> };
  expect(configMap.data["ca.crt"]).toBe(Buffer.from(CA_B64, "base64").toString("utf8"));
  expect(result.verified).toEqual({ hosts: 1, same: 1 });
  expect(result.findings.filter((f) => f.kind === "unconverted")).toEqual([]);
});

test("without proxy-ssl-secret: the public roots (wellKnownCACertificates: System), no ConfigMap", () => {
  const result = convert(
    ingress("public", "a.example.com", "nginx.ingress.kubernetes.io/backend-protocol: HTTPS") + base,
  );
  expect(result.objects.some((o) => o.kind === "ConfigMap")).toBe(false);
  const policy = result.objects.find((o) => o.kind === "BackendTLSPolicy") as {
    spec: { validation: unknown };
  };
  expect(policy.spec.validation).toEqual({ hostname: "api.shop.svc", wellKnownCACertificates: "System" });
});

test("GRPC (h2c), and another Ingress speaking cleartext to a port a policy now covers: findings, never silent", () => {
  const result = convert(
    ingress("grpc", "g.example.com", "nginx.ingress.kubernetes.io/backend-protocol: GRPC", 50051) +
      ingress("secure", "a.example.com", "nginx.ingress.kubernetes.io/backend-protocol: HTTPS") +
      ingress("plain", "b.example.com", "nginx.ingress.kubernetes.io/ssl-redirect: 'false'") +
      base,
  );
  const said = (name: string) =>
    result.findings.filter((f) => f.object.name === name && f.kind === "unconverted").map((f) => f.message);
  expect(said("grpc")[0]).toContain("appProtocol kubernetes.io/h2c");
  expect(said("plain")[0]).toContain("makes every route to that port speak TLS");
  expect(result.verified.same).toBe(1);
});
