/**
 * The frames the gateway sends an h2c backend, read on the wire (a relay that parses HTTP/2 frames between
 * the gateway and a @grpc/grpc-js server), on both fronts. No empty DATA frame without END_STREAM: Node's
 * nghttp2 (so @grpc/grpc-js on Node, a common gRPC server) counts each as an invalid frame and closes the
 * session after 1000, failing the calls in flight on it (ERR_HTTP2_TOO_MANY_INVALID_FRAMES). Bun 1.4.5's
 * client sent one per call when a request's end followed its last write (upstream-h2c.ts, sendBody).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { loadFiles } from "../../../src/sources/file/load.ts";
import { translate } from "../../../src/translate/translate.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GrpcEchoServer, grpcEcho, startGrpcEchoServer } from "../../helpers/grpc-echo-server.ts";
import { freePort } from "../../helpers/ports.ts";

/** DATA frames the gateway sent: all of them, and those empty without END_STREAM. */
const seen = { data: 0, emptyNotLast: 0 };

/** A TCP relay to `port` that reads the client's side as HTTP/2 frames (after the 24-byte preface). */
function frameRelay(port: number): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    let buf = Buffer.alloc(0);
    let preface = false;
    client.on("data", (d: Buffer) => {
      upstream.write(d);
      buf = Buffer.concat([buf, d]);
      if (!preface && buf.length >= 24) {
        buf = buf.subarray(24);
        preface = true;
      }
      while (preface && buf.length >= 9) {
        const length = buf.readUIntBE(0, 3);
        if (buf.length < 9 + length) break;
        const [type, flags] = [buf[3], buf[4] ?? 0];
        if (type === 0) {
          seen.data++;
          if (length === 0 && (flags & 1) === 0) seen.emptyNotLast++;
        }
        buf = buf.subarray(9 + length);
      }
    });
    upstream.on("data", (d: Buffer) => client.write(d));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, port: (server.address() as { port: number }).port, sockets }),
    ),
  );
}

const objects = (listenerPort: number, backend: number) => `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: grpc }
spec:
  gatewayClassName: gatehouse
  addresses: [{ type: IPAddress, value: 127.0.0.1 }]
  listeners: [{ name: h2c, port: ${listenerPort}, protocol: HTTP }]
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
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ name: echo, port: 8080 }] }]
`;

let dir: string;
let echo: GrpcEchoServer;
let relay: Awaited<ReturnType<typeof frameRelay>>;
let restore: ((line: string) => void) | undefined;

beforeAll(async () => {
  restore = setLogSink(() => {});
  dir = await mkdtemp(join(tmpdir(), "gatehouse-h2c-frames-"));
  echo = await startGrpcEchoServer({ pod: "frames" });
  relay = await frameRelay(echo.port);
});

afterAll(async () => {
  for (const s of relay?.sockets ?? []) s.destroy();
  relay?.server.close();
  await echo?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

forEachFront("the frames sent to an h2c backend", (front) => {
  test("unary calls reach the backend without an empty DATA frame that does not end the stream", async () => {
    const listenerPort = await freePort();
    const file = join(dir, `${front}.yaml`);
    await writeFile(file, objects(listenerPort, relay.port));
    const { model } = translate((await loadFiles([file])).snapshot, {});
    const gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(model);
    const { Client } = grpcEcho();
    const client = new Client(`127.0.0.1:${listenerPort}`, grpc.credentials.createInsecure());
    const before = { ...seen };
    const callsBefore = echo.calls;
    try {
      for (let i = 0; i < 20; i++)
        await new Promise<void>((resolve) =>
          client.Echo?.({}, new grpc.Metadata(), { deadline: Date.now() + 5000 }, () => resolve()),
        );
    } finally {
      client.close();
      await gw.stop(true);
    }
    expect(echo.calls - callsBefore).toBe(20);
    expect(seen.data - before.data).toBeGreaterThanOrEqual(20); // the relay did read the calls' frames
    expect(seen.emptyNotLast - before.emptyNotLast).toBe(0);
  });
});
