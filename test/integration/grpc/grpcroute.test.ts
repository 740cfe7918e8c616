/**
 * GRPCRoute end to end on both fronts: objects translated as the sources deliver them, served by the
 * gateway, called with @grpc/grpc-js (a real gRPC client) over h2c with prior knowledge, answered by
 * @grpc/grpc-js servers behind h2c (`appProtocol: kubernetes.io/h2c`). Routed by method and by header,
 * split by weight; a backend's error status and message reach the client from the backend's trailers;
 * the gateway's own errors reach it as gRPC statuses (UNAVAILABLE with no endpoint, DEADLINE_EXCEEDED
 * when the backend does not answer in time, UNIMPLEMENTED with no route). On `--front bun` the listener's
 * h2c is served by node:http2 (h2/cleartext-listener.ts), since Bun.serve's HTTP/2 has no trailers; the
 * last case checks that its HTTP/1.1 stays on Bun.serve with the client's address.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type Http2Server, connect as h2connect, createServer as h2server } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { loadFiles } from "../../../src/sources/file/load.ts";
import { translate } from "../../../src/translate/translate.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import {
  type EchoResponse,
  type GrpcEchoClient,
  grpcEcho,
  grpcEchoService,
} from "../../helpers/grpc-echo-server.ts";
import { freePort } from "../../helpers/ports.ts";

type Result = { code: number; details: string; pod?: string; method?: string };

/** A GrpcEcho server: Echo and EchoTwo answer with `pod`; EchoThree fails as `fail` says, after headers. */
async function backend(pod: string): Promise<{ server: grpc.Server; port: number }> {
  const answer = (method: string) => (_call: unknown, cb: grpc.sendUnaryData<EchoResponse>) =>
    cb(null, {
      assertions: {
        fully_qualified_method: `/${grpcEchoService}/${method}`,
        headers: [],
        authority: "",
        context: { namespace: "grpc", ingress: "", service_name: "", pod },
      },
    });
  const server = new grpc.Server();
  server.addService(grpcEcho().service, {
    Echo: answer("Echo"),
    EchoTwo: answer("EchoTwo"),
    // Headers first, so the status travels in trailers after them (not "Trailers-Only").
    EchoThree: (call: grpc.ServerUnaryCall<object, EchoResponse>, cb: grpc.sendUnaryData<EchoResponse>) => {
      // `slow`: nothing at all for 3 s (the gateway's limit is 1 s to the response head).
      const slow = call.metadata.get("slow").length > 0;
      setTimeout(
        () => {
          // `only`: no headers first, so the status leaves in a head that ends the stream (Trailers-Only).
          if (call.metadata.get("only").length === 0) call.sendMetadata(new grpc.Metadata());
          cb({ code: grpc.status.FAILED_PRECONDITION, details: `pod ${pod}: 100% not ready ✗` });
        },
        slow ? 3000 : 0,
      );
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { server, port };
}

const service = (name: string) => `
apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: grpc }
spec: { ports: [{ port: 8080, targetPort: 3000, appProtocol: kubernetes.io/h2c }] }`;
const endpoints = (name: string, port: number | undefined) => `
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: grpc, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [${port === undefined ? "" : `{ addresses: [127.0.0.1], conditions: { ready: true } }`}]
ports: [{ port: ${port ?? 1}, protocol: TCP }]`;

function objects(listenerPort: number, ports: { a: number; b: number; trailers: number }): string {
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
    service("svc-a"),
    endpoints("svc-a", ports.a),
    service("svc-b"),
    endpoints("svc-b", ports.b),
    service("svc-empty"),
    endpoints("svc-empty", undefined),
    service("svc-trailers"),
    endpoints("svc-trailers", ports.trailers),
    `
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: echo, namespace: grpc }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ method: { service: trailers.Echo } }]
      backendRefs: [{ name: svc-trailers, port: 8080 }]
    - matches: [{ method: { service: ${grpcEchoService}, method: Echo }, headers: [{ name: pick, value: empty }] }]
      backendRefs: [{ name: svc-empty, port: 8080 }]
    - matches: [{ method: { service: ${grpcEchoService}, method: Echo }, headers: [{ name: pick, value: split }] }]
      backendRefs: [{ name: svc-a, port: 8080, weight: 1 }, { name: svc-b, port: 8080, weight: 3 }]
    - matches: [{ method: { service: ${grpcEchoService}, method: Echo } }]
      backendRefs: [{ name: svc-a, port: 8080 }]
    - matches: [{ method: { type: RegularExpression, service: ".*GrpcEcho", method: "Echo(Two|Three)" } }]
      backendRefs: [{ name: svc-b, port: 8080 }]`,
  ].join("\n---");
}

let dir: string;
let a: { server: grpc.Server; port: number };
let b: { server: grpc.Server; port: number };
let restore: ((line: string) => void) | undefined;
/** A plain node:http2 h2c backend: answers with trailers that echo the request's `x-client-trailer`. */
let echoTrailers: Http2Server;
let echoTrailersPort: number;

beforeAll(async () => {
  restore = setLogSink(() => {});
  dir = await mkdtemp(join(tmpdir(), "gatehouse-grpcroute-"));
  a = await backend("pod-a");
  b = await backend("pod-b");
  echoTrailers = h2server((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/grpc" });
      res.write(Buffer.from([0, 0, 0, 0, 0]));
      res.addTrailers({ "grpc-status": "0", "x-echo": String(req.trailers["x-client-trailer"] ?? "none") });
      res.end();
    });
  });
  await new Promise<void>((r) => echoTrailers.listen(0, "127.0.0.1", () => r()));
  echoTrailersPort = (echoTrailers.address() as { port: number }).port;
});

afterAll(async () => {
  echoTrailers?.close();
  a?.server.forceShutdown();
  b?.server.forceShutdown();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

forEachFront("GRPCRoute served to a gRPC client", (front) => {
  let gw: GatewayServer;
  let client: GrpcEchoClient;
  let listenerPort: number;

  beforeAll(async () => {
    const port = await freePort();
    const file = join(dir, `${front}.yaml`);
    listenerPort = port;
    await writeFile(file, objects(port, { a: a.port, b: b.port, trailers: echoTrailersPort }));
    const { snapshot } = await loadFiles([file]);
    const { model, problems } = translate(snapshot, {});
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    gw = new GatewayServer({ bind: "127.0.0.1", front, defaultUpstreamTimeoutMs: 1000 });
    await gw.apply(model);
    const { Client } = grpcEcho();
    client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await gw?.stop(true);
  });

  const call = (method: string, md: Record<string, string> = {}): Promise<Result> => {
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(md)) metadata.add(k, v);
    return new Promise((resolve) => {
      client[method]?.({}, metadata, { deadline: Date.now() + 5000 }, (err, res) =>
        resolve({
          code: err?.code ?? 0,
          details: err?.details ?? "",
          ...(res?.assertions?.context ? { pod: res.assertions.context.pod } : {}),
          ...(res?.assertions ? { method: res.assertions.fully_qualified_method } : {}),
        }),
      );
    });
  };
  const ok = (r: Result, pod: string, method: string) =>
    expect(r).toEqual({ code: 0, details: "", pod, method: `/${grpcEchoService}/${method}` });

  test("a unary call is routed by its method (Exact, then RegularExpression)", async () => {
    ok(await call("Echo"), "pod-a", "Echo");
    ok(await call("EchoTwo"), "pod-b", "EchoTwo");
  });

  test("a header match picks its rule; weights split calls 1:3", async () => {
    const pods: string[] = [];
    for (let i = 0; i < 40; i++) pods.push((await call("Echo", { pick: "split" })).pod ?? "none");
    const toB = pods.filter((p) => p === "pod-b").length;
    expect(toB + pods.filter((p) => p === "pod-a").length).toBe(40);
    // 1:3 of 40: 30 expected; 18..39 leaves a chance of failing of about one in a million.
    expect(toB).toBeGreaterThanOrEqual(18);
    expect(toB).toBeLessThan(40);
  });

  test("the backend's status and message, sent in trailers after its headers, reach the client", async () => {
    const r = await call("EchoThree");
    expect(r).toEqual({ code: grpc.status.FAILED_PRECONDITION, details: "pod pod-b: 100% not ready ✗" });
  });

  test("a backend's Trailers-Only error (status in a head that ends the stream) passes on both fronts", async () => {
    expect(await call("EchoThree", { only: "1" })).toEqual({
      code: grpc.status.FAILED_PRECONDITION,
      details: "pod pod-b: 100% not ready ✗",
    });
  });

  test("the gateway's own errors are gRPC statuses: no endpoint, timeout, no route", async () => {
    const empty = await call("Echo", { pick: "empty" });
    expect(empty.code).toBe(grpc.status.UNAVAILABLE);
    expect(empty.details).toBe("gateway answered HTTP 503 Service Unavailable");
    const slow = await call("EchoThree", { slow: "1" });
    expect(slow.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(slow.details).toBe("gateway answered HTTP 504 Gateway Timeout");
    const none = await new Promise<Result>((resolve) =>
      client.makeUnaryRequest(
        "/other.Service/Call",
        () => Buffer.alloc(0),
        () => ({}),
        {},
        (err) => resolve({ code: err?.code ?? 0, details: err?.details ?? "" }),
      ),
    );
    expect(none).toEqual({ code: grpc.status.UNIMPLEMENTED, details: "gateway answered HTTP 404 Not Found" });
  });

  test("grpc-timeout bounds the wait for the backend: DEADLINE_EXCEEDED from the gateway", async () => {
    const session = h2connect(`http://127.0.0.1:${listenerPort}`);
    session.on("error", () => {});
    try {
      const started = performance.now();
      const head = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const st = session.request({
          ":method": "POST",
          ":path": `/${grpcEchoService}/EchoThree`,
          "content-type": "application/grpc",
          "grpc-timeout": "200m",
          slow: "1",
        });
        st.on("response", (h) => resolve(Object.fromEntries(Object.entries(h))));
        st.on("error", reject);
        st.resume();
        st.end(Buffer.from([0, 0, 0, 0, 0]));
      });
      // The gateway's own limit here is 1 s: an answer well before it is grpc-timeout's doing.
      expect(performance.now() - started).toBeLessThan(800);
      expect(head).toMatchObject({ ":status": 200, "grpc-status": "4" });
    } finally {
      session.close();
    }
  });

  test("the client's request trailers reach the backend; its response trailers come back", async () => {
    const session = h2connect(`http://127.0.0.1:${listenerPort}`);
    session.on("error", () => {});
    try {
      const got = await new Promise<{ status: number; trailers: Record<string, unknown> | undefined }>(
        (resolve, reject) => {
          const st = session.request(
            { ":method": "POST", ":path": "/trailers.Echo/Call", "content-type": "application/grpc" },
            { waitForTrailers: true },
          );
          st.on("wantTrailers", () => st.sendTrailers({ "x-client-trailer": "from-client" }));
          let status = 0;
          let trailers: Record<string, unknown> | undefined;
          st.on("response", (h) => {
            status = Number(h[":status"]);
          });
          st.on("trailers", (t) => {
            trailers = Object.fromEntries(Object.entries(t));
          });
          st.on("close", () => resolve({ status, trailers }));
          st.on("error", reject);
          st.resume();
          st.end(Buffer.from([0, 0, 0, 0, 0]));
        },
      );
      expect(got.status).toBe(200);
      expect(got.trailers).toEqual({ "grpc-status": "0", "x-echo": "from-client" });
    } finally {
      session.close();
    }
  });
});
