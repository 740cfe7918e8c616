/**
 * Bad input around a gRPC call, on both fronts: backends that break the protocol and a client that gives
 * up mid-body. Each case asserts that the client gets an error status soon (never a hang: every call here
 * has a 5 s deadline and the gateway's own limit is 4 s, and each must end well before either) and that the
 * gateway then serves the next call (a good backend behind the same listener answers).
 *
 * - `http1`: a backend that speaks HTTP/1.1 on a port declared h2c (answers the h2 preface with an
 *   HTTP/1.1 400 and keeps the connection open): UNAVAILABLE from the gateway.
 * - `notrailers`: a body and then the end of the stream, without trailers: the call has no status.
 * - `bigtrailers`: a body and then a 1 MB trailer block, which the gateway's h2c client refuses
 *   (FRAME_SIZE_ERROR): the client's stream is reset (INTERNAL_ERROR), not ended as if whole; logged.
 * - a client that resets its stream mid-body: the backend's stream is reset (CANCEL) before it has seen
 *   an end of the body (docs/http.md "gRPC": Bun's close() would send END_STREAM first).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import {
  type Http2Server,
  connect as h2connect,
  createServer as h2server,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import { type Server as NetServer, createServer as netServer, type Socket } from "node:net";
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

const GRPC_EMPTY_MESSAGE = Buffer.from([0, 0, 0, 0, 0]);

const service = (name: string, port: number) => `
---
apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: grpc }
spec: { ports: [{ port: 8080, targetPort: 3000, appProtocol: kubernetes.io/h2c }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: grpc, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${port}, protocol: TCP }]`;

/** GRPCRoute rules by service name: `bad.<name>` goes to the backend `<name>`, the rest to `good`. */
function objects(listenerPort: number, ports: Record<string, number>): string {
  const names = Object.keys(ports).filter((n) => n !== "good");
  return `
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
${Object.entries(ports)
  .map(([name, port]) => service(name, port))
  .join("")}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: hostile, namespace: grpc }
spec:
  parentRefs: [{ name: gw }]
  rules:
${names.map((n) => `    - { matches: [{ method: { service: bad.${n} } }], backendRefs: [{ name: ${n}, port: 8080 }] }`).join("\n")}
    - backendRefs: [{ name: good, port: 8080 }]
`;
}

let dir: string;
let good: GrpcEchoServer;
let http1: NetServer;
const http1Sockets = new Set<Socket>();
let h2: Http2Server;
/** What the h2 backend saw of the stream the client reset: its body's bytes and how it ended. */
const cancelled: { bytes: number; events: string[] }[] = [];
let restore: ((line: string) => void) | undefined;
const logs: string[] = [];

beforeAll(async () => {
  restore = setLogSink((line) => logs.push(line));
  dir = await mkdtemp(join(tmpdir(), "gatehouse-grpc-hostile-"));
  good = await startGrpcEchoServer({ pod: "good" });
  // An HTTP/1.1 server on a port the Service calls h2c: it answers the client preface as HTTP/1.1 would,
  // then keeps the connection open (the case that could hang a client waiting for a SETTINGS frame).
  http1 = netServer((s) => {
    http1Sockets.add(s);
    s.on("close", () => http1Sockets.delete(s));
    s.on("error", () => {});
    s.once("data", () => s.write("HTTP/1.1 400 Bad Request\r\ncontent-length: 11\r\n\r\nBad Request"));
  });
  await new Promise<void>((r) => http1.listen(0, "127.0.0.1", () => r()));
  h2 = h2server();
  h2.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const path = String(headers[":path"]);
    stream.on("error", () => {});
    if (path.startsWith("/bad.reset/")) {
      const seen = { bytes: 0, events: [] as string[] };
      cancelled.push(seen);
      stream.on("data", (c: Buffer) => {
        seen.bytes += c.length;
      });
      for (const e of ["end", "aborted"]) stream.on(e, () => seen.events.push(e));
      stream.on("close", () => seen.events.push(`close ${stream.rstCode}`));
      return;
    }
    stream.resume();
    stream.on("end", () => {
      const trailers = path.startsWith("/bad.bigtrailers/");
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: trailers });
      if (trailers)
        stream.once("wantTrailers", () =>
          stream.sendTrailers({ "grpc-status": "0", "x-big": "x".repeat(1 << 20) }),
        );
      stream.end(GRPC_EMPTY_MESSAGE); // `notrailers`: the body, then END_STREAM on DATA, no trailers
    });
  });
  await new Promise<void>((r) => h2.listen(0, "127.0.0.1", () => r()));
});

afterAll(async () => {
  for (const s of http1Sockets) s.destroy();
  http1?.close();
  h2?.close();
  await good?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;

forEachFront("gRPC calls against hostile backends and clients", (front) => {
  let gw: GatewayServer;
  let client: grpc.Client;
  let listenerPort: number;

  beforeAll(async () => {
    listenerPort = await freePort();
    const file = join(dir, `${front}.yaml`);
    const h2port = portOf(h2);
    const ports = {
      good: good.port,
      http1: portOf(http1),
      notrailers: h2port,
      bigtrailers: h2port,
      reset: h2port,
    };
    await writeFile(file, objects(listenerPort, ports));
    const { model, problems } = translate((await loadFiles([file])).snapshot, {});
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    gw = new GatewayServer({ bind: "127.0.0.1", front, defaultUpstreamTimeoutMs: 4000 });
    await gw.apply(model);
    client = new grpc.Client(`127.0.0.1:${listenerPort}`, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await gw?.stop(true);
  });

  /** A unary call with an empty message: its status code, details and how long it took. */
  const call = (path: string) =>
    new Promise<{ code: number; details: string; ms: number }>((resolve) => {
      const started = performance.now();
      client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        new grpc.Metadata(),
        { deadline: Date.now() + 5000 },
        (err) =>
          resolve({ code: err?.code ?? 0, details: err?.details ?? "", ms: performance.now() - started }),
      );
    });

  /** The good backend still answers through the same listener (a fresh client: a fresh connection too). */
  const stillServes = async () => {
    const { Client } = grpcEcho();
    const fresh = new Client(`127.0.0.1:${listenerPort}`, grpc.credentials.createInsecure());
    try {
      const pod = await new Promise<string>((resolve) =>
        fresh.Echo?.({}, new grpc.Metadata(), { deadline: Date.now() + 5000 }, (err, res) =>
          resolve(err ? `error ${err.code}` : (res?.assertions?.context?.pod ?? "none")),
        ),
      );
      expect(pod).toBe("good");
    } finally {
      fresh.close();
    }
  };

  test("a backend speaking HTTP/1.1 on an h2c port: UNAVAILABLE at once, not a hang", async () => {
    const r = await call("/bad.http1/Call");
    expect(r).toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: "gateway answered HTTP 502 Bad Gateway",
    });
    expect(r.ms).toBeLessThan(2000);
    await stillServes();
  });

  test("a body without trailers: the call ends with an error status, not a hang", async () => {
    const r = await call("/bad.notrailers/Call");
    // grpc-js: "Call ended without gRPC status", as from a backend called directly.
    expect(r.code).toBe(grpc.status.INTERNAL);
    expect(r.ms).toBeLessThan(2000);
    await stillServes();
  });

  test("a 1 MB trailer block: the client gets an error, the gateway stays up", async () => {
    const r = await call("/bad.bigtrailers/Call");
    // The gateway's h2c client refuses the block (FRAME_SIZE_ERROR): the client's stream is reset.
    expect(r).toMatchObject({
      code: grpc.status.INTERNAL,
      details: "Received RST_STREAM with code 2 (Internal server error)",
    });
    expect(r.ms).toBeLessThan(2000);
    expect(
      logs.some((l) => l.includes("upstream response failed mid-body") && l.includes("FRAME_SIZE")),
    ).toBe(true);
    await stillServes();
  });

  test("a client that resets its stream mid-body: the backend's stream is cancelled", async () => {
    const before = cancelled.length;
    const session = h2connect(`http://127.0.0.1:${listenerPort}`);
    session.on("error", () => {});
    try {
      // Reset by its signal: Bun's `close(CANCEL)` would send END_STREAM before RST_STREAM (docs/http.md).
      const cancel = new AbortController();
      const st = session.request(
        { ":method": "POST", ":path": "/bad.reset/Call", "content-type": "application/grpc" },
        { signal: cancel.signal },
      );
      st.on("error", () => {});
      // A message announced as 100 bytes of which 10 are sent: the backend waits for the rest.
      st.write(Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), Buffer.alloc(10)]));
      const deadline = Date.now() + 3000;
      while ((cancelled[before]?.bytes ?? 0) < 15 && Date.now() < deadline) await Bun.sleep(10);
      expect(cancelled[before]?.bytes).toBe(15);
      cancel.abort(); // RST_STREAM CANCEL
      const seen = cancelled[before];
      while (!seen?.events.some((e) => e.startsWith("close")) && Date.now() < deadline + 2000)
        await Bun.sleep(10);
      // Aborted before any end: the backend never saw the body as whole (node:http2 emits `end` after).
      expect(seen?.events[0]).toBe("aborted");
      expect(seen?.events).toContain("close 8");
    } finally {
      session.close();
    }
    await stillServes();
  });
});
