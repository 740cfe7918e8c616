/**
 * Connection caps of a BackendTrafficPolicy `circuitBreaker`, live on both fronts, each Service on a
 * backend of its own that counts the connections it accepts and holds open, and the requests each carries:
 * - `capped` (`maxConnections: 2`): with two requests held a third gets 503 at once (overloaded mark,
 *   counted under limit="connections"); the backend never sees more than 2 connections open;
 * - `per` (`perEndpoint: { maxConnections: 1 }`): the same for its one endpoint (limit="endpoint_connections");
 * - `reuse` (`maxRequestsPerConnection: 2`): no connection carries more than 2 requests. The raw front
 *   pools its own connections, so 6 requests in a row take 3; the written exception: the full path
 *   (`--front bun`) sends each on a connection of its own (Bun's fetch with no keep-alive), so 6 take 6.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, TCPSocketListener } from "bun";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

interface Conn {
  buf: string;
  requests: number;
}

/** An HTTP/1.1 upstream on raw sockets: `/hold` is answered on release(), anything else at once. */
function countingBackend() {
  const b = {
    open: 0,
    maxOpen: 0,
    accepted: 0,
    maxPerConnection: 0,
    waiting: [] as (() => void)[],
    release() {
      for (const w of b.waiting.splice(0)) w();
    },
    server: undefined as TCPSocketListener<Conn> | undefined,
  };
  const answer = (s: Socket<Conn>, close: boolean) => {
    s.write(`HTTP/1.1 200 OK\r\ncontent-length: 2\r\n${close ? "connection: close\r\n" : ""}\r\nok`);
    if (close) s.end();
  };
  b.server = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        s.data = { buf: "", requests: 0 };
        b.open++;
        b.accepted++;
        b.maxOpen = Math.max(b.maxOpen, b.open);
      },
      data(s, chunk) {
        s.data.buf += chunk.toString("latin1");
        for (let end = s.data.buf.indexOf("\r\n\r\n"); end >= 0; end = s.data.buf.indexOf("\r\n\r\n")) {
          const head = s.data.buf.slice(0, end);
          s.data.buf = s.data.buf.slice(end + 4);
          s.data.requests++;
          b.maxPerConnection = Math.max(b.maxPerConnection, s.data.requests);
          const close = /\r\nconnection: *close/i.test(head);
          if (head.split(" ")[1] === "/hold") b.waiting.push(() => answer(s, close));
          else answer(s, close);
        }
      },
      close() {
        b.open--;
      },
    },
  });
  return b;
}
type Backend = ReturnType<typeof countingBackend>;

function service(ns: string, name: string, port: number): string {
  return `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${ns} }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, namespace: ${ns}, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${port} }]
`;
}

const policy = (ns: string, service: string, cb: unknown) => `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${service}, namespace: ${ns} }
spec:
  targetRefs: [{ group: "", kind: Service, name: ${service} }]
  circuitBreaker: ${JSON.stringify(cb)}
`;

forEachFront("circuit breaker connection caps, live", (front) => {
  const ns = `cbc-${front}`;
  const backends: Record<string, Backend> = {};
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    const caps: Record<string, unknown> = {
      capped: { maxConnections: 2 },
      per: { perEndpoint: { maxConnections: 1 } },
      reuse: { maxRequestsPerConnection: 2 },
    };
    dir = await mkdtemp(join(tmpdir(), "gatehouse-cbc-"));
    const docs: string[] = [];
    for (const [name, cb] of Object.entries(caps)) {
      const b = countingBackend();
      backends[name] = b;
      docs.push(
        annotatedIngressYaml({ name, namespace: ns, host: `${name}.test`, service: name, annotations: {} }),
        service(ns, name, b.server?.port as number),
        policy(ns, name, cb),
      );
    }
    await writeFile(join(dir, "cbc.yaml"), docs.join("---\n"));
    const flags = ["--front", front, "--access-log-sample", "0", "--upstream-timeout-ms", "3000"];
    ({ gw, port } = await startTestGateway(["--dir", dir], flags));
  });

  afterAll(async () => {
    for (const b of Object.values(backends)) b.release();
    await gw?.stop({ delayMs: 0 });
    for (const b of Object.values(backends)) b.server?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function metric(name: string, labels: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${gw.admin.port}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  const rejected = (service: string, limit: string) =>
    metric("gatehouse_circuit_breaker_rejections_total", `backend="${ns}/${service}:80",limit="${limit}"`);
  const get = (host: string, path: string) =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers: { host }, keepalive: false });

  async function capCase(service: string, cap: number, limit: string) {
    const b = backends[service] as Backend;
    const before = await rejected(service, limit);
    const held = Array.from({ length: cap }, () => get(`${service}.test`, "/hold"));
    await within(3000, async () => b.waiting.length === cap);
    const t0 = performance.now();
    const over = await get(`${service}.test`, "/fast");
    expect(over.status).toBe(503);
    expect(over.headers.get("x-gatehouse-overloaded")).toBe("true");
    expect(performance.now() - t0).toBeLessThan(1000);
    await over.text();
    expect(await rejected(service, limit)).toBe(before + 1);
    b.release();
    for (const h of held) expect((await h).status).toBe(200);
    // Under the cap requests pass again, several at once, and the backend never saw more connections.
    for (let round = 0; round < 3; round++) {
      const ok = await Promise.all(Array.from({ length: cap }, () => get(`${service}.test`, "/fast")));
      expect(ok.map((r) => r.status)).toEqual(Array(cap).fill(200));
      await Promise.all(ok.map((r) => r.text()));
    }
    expect(b.maxOpen).toBeLessThanOrEqual(cap);
  }

  test("maxConnections 2: two held, the third gets 503 at once and is counted; never more than 2 open", () =>
    capCase("capped", 2, "connections"));

  test("perEndpoint.maxConnections 1: one held, the next gets 503 under its own label", () =>
    capCase("per", 1, "endpoint_connections"));

  test("maxRequestsPerConnection 2: no upstream connection carries more than 2 requests", async () => {
    const b = backends.reuse as Backend;
    const before = b.accepted;
    for (let i = 0; i < 6; i++) {
      const r = await get("reuse.test", "/fast");
      expect(r.status).toBe(200);
      await r.text();
    }
    expect(b.maxPerConnection).toBeLessThanOrEqual(2);
    // The written exception: the full path has no pool of its own to count, so each request gets one.
    expect(b.accepted - before).toBe(front === "raw" ? 3 : 6);
  });
});
