/**
 * BackendTLSPolicy through `gatehouse serve --kube` (the real informers, translate, the status writer and
 * the data plane) against the test API server, on both fronts: a route to a Service a policy targets
 * reaches a TLS backend with the policy's hostname as SNI, verified against the CA ConfigMap the policy
 * names (kept with its data because it names it), presenting the Gateway's backend client certificate;
 * the policy gets one ancestor entry of ours (another controller's entry is kept). A ConfigMap whose
 * ca.crt turns to garbage makes the policy NoValidCACertificate and the route answer 503, never cleartext,
 * until it is fixed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { clientCertificate, serverCertificate, testAuthority } from "../../../src/proxy/testing/certs.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { gatewayClass, ns, tlsSecret, within } from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { startTlsEchoServer, type TlsEchoServer } from "../../helpers/tls-echo-server.ts";

const ca = testAuthority("backend-ca");
const serving = serverCertificate(ca, { dns: ["secure.example.com"] });
const client = clientCertificate(ca, "gatehouse");
const foreign = {
  ancestorRef: { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: ns, name: "theirs" },
  controllerName: "example.com/another-controller",
  conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message: "theirs" }],
};

const caConfigMap = (pem: string): Obj => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "backend-ca", namespace: ns },
  data: { "ca.crt": pem },
});

function objects(listenerPort: number, backendPort: number): Obj[] {
  return [
    gatewayClass(),
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gw", namespace: ns },
      spec: {
        gatewayClassName: "gatehouse",
        tls: { backend: { clientCertificateRef: { name: "client" } } },
        listeners: [{ name: "http", port: listenerPort, protocol: "HTTP" }],
      },
    },
    tlsSecret("client", client),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "secure", namespace: ns },
      spec: { ports: [{ name: "https", port: 443, targetPort: backendPort, appProtocol: "https" }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "secure-1", namespace: ns, labels: { "kubernetes.io/service-name": "secure" } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      ports: [{ name: "https", port: backendPort, protocol: "TCP" }],
    },
    caConfigMap(ca.certPem),
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "secure", namespace: ns },
      spec: {
        parentRefs: [{ name: "gw" }],
        hostnames: ["secure.test"],
        rules: [{ backendRefs: [{ name: "secure", port: 443 }] }],
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "BackendTLSPolicy",
      metadata: { name: "secure", namespace: ns },
      spec: {
        targetRefs: [{ group: "", kind: "Service", name: "secure", sectionName: "https" }],
        validation: {
          caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "backend-ca" }],
          hostname: "secure.example.com",
        },
      },
    },
  ];
}

const flat = (pem: string) => pem.replace(/\s+/g, "");

forEachFront("BackendTLSPolicy through the Kubernetes source", (front) => {
  let api: KubeApiServer;
  let backend: TlsEchoServer;
  let gw: RunningGateway;
  let dir: string;
  let listenerPort: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    backend = await startTlsEchoServer({
      ...serving,
      clientCA: ca.certPem,
      service: "secure",
      namespace: ns,
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-backend-tls-"));
    listenerPort = await freePort();
    for (const o of objects(listenerPort, backend.port)) api.create(o);
    // An ancestor entry of another controller, written through /status as it would write it: kept.
    const policy = api.get("BackendTLSPolicy", ns, "secure");
    api.store.update(
      api.resource("BackendTLSPolicy"),
      ns,
      "secure",
      { ...policy, status: { ancestors: [foreign] } },
      "status",
    );
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
    ({ gw } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      ["--front", front, "--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
    ));
  });

  afterAll(async () => {
    await gw?.stop();
    await api?.stop();
    await backend?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async () => {
    const res = await fetch(`http://127.0.0.1:${listenerPort}/x`, { headers: { host: "secure.test" } });
    const text = await res.text();
    return { status: res.status, body: res.status === 200 ? JSON.parse(text) : undefined };
  };
  // biome-ignore lint/suspicious/noExplicitAny: a status as the API returned it
  const ancestors = (): any[] => api.get("BackendTLSPolicy", ns, "secure").status?.ancestors ?? [];
  const ours = () => ancestors().find((a) => a.controllerName === "gatehouse.dev/gateway-controller");
  const condition = (type: string) => ours()?.conditions?.find((c: Obj) => c.type === type);

  test("TLS with the policy's SNI and CA, presenting the Gateway's client certificate; the policy's status", async () => {
    await within(5000, async () => (await get()).status === 200);
    const { body } = await get();
    expect(body.service).toBe("secure");
    expect(body.tls.serverName).toBe("secure.example.com");
    expect(body.tls.peerCertificates.map(flat)).toEqual([flat(client.certPem)]);
    await within(5000, () => condition("ResolvedRefs") !== undefined);
    expect(ours().ancestorRef).toEqual({
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      namespace: ns,
      name: "gw",
    });
    expect(condition("Accepted")).toMatchObject({
      status: "True",
      reason: "Accepted",
      observedGeneration: 1,
    });
    expect(condition("ResolvedRefs")).toMatchObject({ status: "True", reason: "ResolvedRefs" });
    expect(ancestors()).toContainEqual(foreign);
    const gwRefs = api
      .get("Gateway", ns, "gw")
      .status?.conditions?.find((c: Obj) => c.type === "ResolvedRefs");
    expect(gwRefs).toMatchObject({ status: "True", reason: "ResolvedRefs" });
  });

  test("a CA ConfigMap turned to garbage: 503 and NoValidCACertificate, never cleartext; fixed: served again", async () => {
    const before = backend.requests;
    api.apply(caConfigMap("-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n"));
    await within(5000, async () => (await get()).status === 503);
    await within(5000, () => condition("Accepted")?.reason === "NoValidCACertificate");
    expect(condition("Accepted")).toMatchObject({ status: "False" });
    expect(condition("ResolvedRefs")).toMatchObject({ status: "False", reason: "InvalidCACertificateRef" });
    expect(condition("ResolvedRefs").message).toContain(`ConfigMap ${ns}/backend-ca`);
    const during = backend.requests;
    expect((await get()).status).toBe(503);
    expect(backend.requests).toBe(during);
    api.apply(caConfigMap(ca.certPem));
    await within(5000, async () => (await get()).status === 200);
    await within(5000, () => condition("Accepted")?.status === "True");
    expect(backend.requests).toBeGreaterThan(before);
  });
});
