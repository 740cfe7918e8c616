/**
 * GRPCRoute on an HTTPS listener, on both fronts, with `--http2` off (the default): GRPCRoute requires an
 * HTTPS listener to accept HTTP/2 by ALPN (v1.6.1), so a listener serving one offers `h2` whatever the
 * flag says (listeners/listener-identity.ts `servesGrpc`), and a @grpc/grpc-js client over TLS gets its
 * answer, with the status from the backend's trailers, on both fronts (over TLS both serve HTTP/2 with
 * node:http2, which relays trailers). A listener without GRPCRoutes keeps HTTP/1.1 only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { loadFiles } from "../../../src/sources/file/load.ts";
import { translate } from "../../../src/translate/translate.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import {
  type GrpcEchoServer,
  grpcEcho,
  grpcEchoService,
  startGrpcEchoServer,
} from "../../helpers/grpc-echo-server.ts";
import { freePort } from "../../helpers/ports.ts";

const cert = selfSigned("grpc.example.com");
const b64 = (s: string) => Buffer.from(s).toString("base64");

function objects(grpcPort: number, webPort: number, backend: number): string {
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
---
apiVersion: v1
kind: Secret
metadata: { name: tls, namespace: grpc }
type: kubernetes.io/tls
data: { tls.crt: ${b64(cert.certPem)}, tls.key: ${b64(cert.keyPem)} }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: grpc }
spec:
  gatewayClassName: gatehouse
  addresses: [{ type: IPAddress, value: 127.0.0.1 }]
  listeners:
    - { name: grpc, port: ${grpcPort}, protocol: HTTPS, tls: { certificateRefs: [{ name: tls }] } }
    - { name: web, port: ${webPort}, protocol: HTTPS, tls: { certificateRefs: [{ name: tls }] } }
---
apiVersion: v1
kind: Service
metadata: { name: echo, namespace: grpc }
spec: { ports: [{ port: 8080, targetPort: 3000, appProtocol: kubernetes.io/h2c }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: echo-1, namespace: grpc, labels: { kubernetes.io/service-name: echo } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${backend}, protocol: TCP }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: echo, namespace: grpc }
spec:
  parentRefs: [{ name: gw, sectionName: grpc }]
  rules: [{ backendRefs: [{ name: echo, port: 8080 }] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web, namespace: grpc }
spec:
  parentRefs: [{ name: gw, sectionName: web }]
  rules: [{ backendRefs: [{ name: echo, port: 8080 }] }]
`;
}

/** The protocol ALPN settles on when a client offers h2 and http/1.1. */
function alpn(port: number): Promise<string | false> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect(
      {
        host: "127.0.0.1",
        port,
        servername: "grpc.example.com",
        ALPNProtocols: ["h2", "http/1.1"],
        rejectUnauthorized: false,
      },
      () => {
        resolve(s.alpnProtocol ?? false);
        s.destroy();
      },
    );
    s.on("error", reject);
  });
}

let dir: string;
let echo: GrpcEchoServer;
let restore: ((line: string) => void) | undefined;

beforeAll(async () => {
  restore = setLogSink(() => {});
  dir = await mkdtemp(join(tmpdir(), "gatehouse-grpcroute-https-"));
  echo = await startGrpcEchoServer({ pod: "pod-tls" });
});

afterAll(async () => {
  await echo?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

forEachFront("GRPCRoute on an HTTPS listener without --http2", (front) => {
  let gw: GatewayServer;
  let grpcPort: number;
  let webPort: number;

  beforeAll(async () => {
    grpcPort = await freePort();
    webPort = await freePort();
    const file = join(dir, `${front}.yaml`);
    await writeFile(file, objects(grpcPort, webPort, echo.port));
    const { model, problems } = translate((await loadFiles([file])).snapshot, {});
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    gw = new GatewayServer({ bind: "127.0.0.1", front, http2: false });
    await gw.apply(model);
  });

  afterAll(() => gw?.stop(true));

  test("ALPN offers h2 on the GRPCRoute's listener only", async () => {
    expect(await alpn(grpcPort)).toBe("h2");
    // Bun.serve (--front bun without HTTP/2) answers no ALPN at all: HTTP/1.1 all the same.
    expect(await alpn(webPort)).toBe(front === "raw" ? "http/1.1" : false);
  });

  test("a unary call over TLS is answered, its status from the backend's trailers", async () => {
    const { Client } = grpcEcho();
    const client = new Client(
      `127.0.0.1:${grpcPort}`,
      grpc.credentials.createSsl(Buffer.from(cert.certPem)),
      {
        "grpc.ssl_target_name_override": "grpc.example.com",
        "grpc.default_authority": "grpc.example.com",
      },
    );
    try {
      const got = await new Promise<{ code: number; pod?: string; method?: string }>((resolve) =>
        client.Echo?.({}, new grpc.Metadata(), { deadline: Date.now() + 5000 }, (err, res) =>
          resolve({
            code: err?.code ?? 0,
            ...(res?.assertions?.context ? { pod: res.assertions.context.pod } : {}),
            ...(res?.assertions ? { method: res.assertions.fully_qualified_method } : {}),
          }),
        ),
      );
      expect(got).toEqual({ code: 0, pod: "pod-tls", method: `/${grpcEchoService}/Echo` });
    } finally {
      client.close();
    }
  });
});
