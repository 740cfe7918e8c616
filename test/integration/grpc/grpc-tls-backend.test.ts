/**
 * gRPC to a backend in TLS: a GRPCRoute to a Service with a BackendTLSPolicy, answered by @grpc/grpc-js
 * servers with TLS credentials (a certificate for `grpc.example.com` from a test CA). The gateway speaks
 * HTTP/2 over TLS (ALPN h2) and verifies the certificate: a call through the policy with the right CA
 * succeeds; through a policy naming another host, or trusting another CA, it fails UNAVAILABLE and the
 * backend never sees it. A client of the gateway uses h2c, on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { serverCertificate, testAuthority } from "../../../src/proxy/testing/certs.ts";
import { loadFiles } from "../../../src/sources/file/load.ts";
import { translate } from "../../../src/translate/translate.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type EchoResponse, type GrpcEchoClient, grpcEcho } from "../../helpers/grpc-echo-server.ts";
import { freePort } from "../../helpers/ports.ts";

const HOST = "grpc.example.com";

let dir: string;
let server: grpc.Server;
let calls = 0;
let backendPort: number;
let caPem: string;
let otherCaPem: string;
let restore: ((line: string) => void) | undefined;

const indent = (pem: string) => pem.trim().replace(/\n/g, "\n    ");

function objects(listenerPort: number, backendPort: number, caPem: string, otherCaPem: string): string {
  const svc = (name: string) => `
apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: grpc }
spec: { ports: [{ name: grpcs, port: 443, targetPort: ${backendPort} }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: grpc, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: grpcs, port: ${backendPort} }]`;
  const policy = (name: string, hostname: string, ca: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: { name: ${name}, namespace: grpc }
spec:
  targetRefs: [{ group: "", kind: Service, name: ${name} }]
  validation:
    caCertificateRefs: [{ group: "", kind: ConfigMap, name: ${ca} }]
    hostname: ${hostname}`;
  const configMap = (name: string, pem: string) => `
apiVersion: v1
kind: ConfigMap
metadata: { name: ${name}, namespace: grpc }
data:
  ca.crt: |
    ${indent(pem)}`;
  const rule = (header: string, service: string) =>
    `    - matches: [{ headers: [{ name: pick, value: ${header} }] }]
      backendRefs: [{ name: ${service}, port: 443 }]`;
  return [
    `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }`,
    `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: grpc }
spec:
  gatewayClassName: gatehouse
  addresses: [{ type: IPAddress, value: 127.0.0.1 }]
  listeners: [{ name: h2c, port: ${listenerPort}, protocol: HTTP }]`,
    svc("good"),
    svc("wrong-name"),
    svc("wrong-ca"),
    policy("good", HOST, "ca"),
    policy("wrong-name", "other.example.com", "ca"),
    policy("wrong-ca", HOST, "other-ca"),
    configMap("ca", caPem),
    configMap("other-ca", otherCaPem),
    `
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: echo, namespace: grpc }
spec:
  parentRefs: [{ name: gw }]
  rules:
${rule("good", "good")}
${rule("wrong-name", "wrong-name")}
${rule("wrong-ca", "wrong-ca")}`,
  ].join("\n---");
}

beforeAll(async () => {
  restore = setLogSink(() => {});
  dir = await mkdtemp(join(tmpdir(), "gatehouse-grpc-tls-"));
  const ca = testAuthority("grpc-ca");
  const other = testAuthority("other-ca");
  const leaf = serverCertificate(ca, { dns: [HOST] });
  server = new grpc.Server();
  server.addService(grpcEcho().service, {
    Echo: (_call: unknown, cb: grpc.sendUnaryData<EchoResponse>) => {
      calls++;
      cb(null, {
        assertions: {
          fully_qualified_method: "/grpc.testing.GrpcEcho/Echo",
          headers: [],
          authority: "",
          context: { namespace: "grpc", ingress: "", service_name: "", pod: "tls-pod" },
        },
      });
    },
  });
  const creds = grpc.ServerCredentials.createSsl(null, [
    { cert_chain: Buffer.from(leaf.certPem), private_key: Buffer.from(leaf.keyPem) },
  ]);
  backendPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", creds, (e, p) => (e ? reject(e) : resolve(p))),
  );
  caPem = ca.certPem;
  otherCaPem = other.certPem;
});

afterAll(async () => {
  server?.forceShutdown();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

forEachFront("gRPC to a backend in TLS", (front) => {
  let gw: GatewayServer;
  let client: GrpcEchoClient;

  beforeAll(async () => {
    const listenerPort = await freePort();
    const file = join(dir, `${front}.yaml`);
    await writeFile(file, objects(listenerPort, backendPort, caPem, otherCaPem));
    const { snapshot } = await loadFiles([file]);
    const { model, problems } = translate(snapshot, {});
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    gw = new GatewayServer({ bind: "127.0.0.1", front, defaultUpstreamTimeoutMs: 2000 });
    await gw.apply(model);
    const { Client } = grpcEcho();
    client = new Client(`127.0.0.1:${listenerPort}`, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await gw?.stop(true);
  });

  const call = (pick: string): Promise<{ code: number; pod?: string }> => {
    const md = new grpc.Metadata();
    md.add("pick", pick);
    return new Promise((resolve) => {
      client.Echo?.({}, md, { deadline: Date.now() + 5000 }, (err, res) => {
        const pod = res?.assertions?.context?.pod;
        resolve({ code: err?.code ?? 0, ...(pod !== undefined ? { pod } : {}) });
      });
    });
  };

  test("a call reaches the TLS backend over h2 with its certificate verified; its status comes back", async () => {
    expect(await call("good")).toEqual({ code: grpc.status.OK, pod: "tls-pod" });
    expect(await call("good")).toEqual({ code: grpc.status.OK, pod: "tls-pod" });
  });

  test("a certificate for another name, or from a CA the policy does not trust: UNAVAILABLE, nothing sent", async () => {
    const before = calls;
    expect((await call("wrong-name")).code).toBe(grpc.status.UNAVAILABLE);
    expect((await call("wrong-ca")).code).toBe(grpc.status.UNAVAILABLE);
    expect(calls).toBe(before);
  });
});
