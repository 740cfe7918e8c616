/**
 * Circuit breaking and ingress-nginx `limit-connections` live on both fronts, from a folder:
 * - Service `slow` has a BackendTrafficPolicy `circuitBreaker: { maxParallelRequests: 2 }`: with two
 *   requests held by the backend a third gets 503 at once (`x-gatehouse-overloaded: true`) and the metric
 *   counts it; the count comes back down on every way a request ends (answered, client gone before the
 *   answer, client gone mid-body, upstream timeout), so requests pass again and the gauge reads 0.
 * - Service `flaky` answers 503 and its Ingress retries on 503; `maxParallelRetries: 0` lets no retry go.
 * - Ingress `conn` (`limit-connections: "1"`, Service `free`, no breaker): one request in flight per
 *   client address; a second from the same address gets 503, one from another (127.0.0.3) goes through;
 *   127.0.0.4 is in its `limit-allowlist`, so it is neither counted nor capped.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

/** The backend: `/hold` answers when released, `/stream` sends a head and holds its body, `/hang` never answers. */
function startBackend() {
  const b = {
    inFlight: 0,
    hits: 0,
    waiting: [] as (() => void)[],
    release() {
      for (const w of b.waiting.splice(0)) w();
    },
    server: undefined as ReturnType<typeof Bun.serve> | undefined,
  };
  b.server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      b.hits++;
      if (path === "/flaky") return new Response("busy", { status: 503 });
      if (path === "/fast") return new Response("ok");
      if (path === "/big") return new Response("x".repeat(256 * 1024));
      b.inFlight++;
      const released = new Promise<void>((r) => b.waiting.push(r));
      if (path === "/hang") {
        await released;
        b.inFlight--;
        return new Response("late");
      }
      if (path === "/stream") {
        const body = new ReadableStream<Uint8Array>({
          async start(c) {
            c.enqueue(new TextEncoder().encode("first part;"));
            await released;
            b.inFlight--;
            // The proxy may have dropped the connection (its client left): then there is no one to send to.
            try {
              c.enqueue(new TextEncoder().encode("rest"));
              c.close();
            } catch {}
          },
        });
        return new Response(body);
      }
      await released;
      b.inFlight--;
      return new Response("done");
    },
  });
  return b;
}
type Backend = ReturnType<typeof startBackend>;

function services(ns: string, port: number): string {
  return ["slow", "flaky", "free"]
    .map(
      (name) => `apiVersion: v1
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
`,
    )
    .join("---\n");
}

const policy = (
  ns: string,
  service: string,
  cb: Record<string, number>,
) => `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${service}, namespace: ${ns} }
spec:
  targetRefs: [{ group: "", kind: Service, name: ${service} }]
  circuitBreaker: ${JSON.stringify(cb)}
`;

/** An HTTP/1.1 request from `from` on its own connection; `answer` resolves with the status and head. */
function send(port: number, host: string, path: string, from = "127.0.0.1") {
  const socket: Socket = connect({ host: "127.0.0.1", port, localAddress: from });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  let text = "";
  const answer = new Promise<{ status: number; head: string; text: string }>((resolve) => {
    socket.on("data", (d) => {
      text += d.toString("latin1");
    });
    const done = () => {
      const head = text.split("\r\n\r\n")[0] ?? "";
      resolve({ status: Number(head.split(" ")[1] ?? 0), head: head.toLowerCase(), text });
    };
    socket.on("close", done);
    socket.on("error", done);
  });
  return { socket, answer, got: () => text };
}

forEachFront("circuit breaking and limit-connections, live", (front) => {
  const ns = `cb-${front}`;
  let backend: Backend;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    backend = startBackend();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-cb-"));
    const ingress = (name: string, service: string, annotations: Record<string, string> = {}) =>
      annotatedIngressYaml({ name, namespace: ns, host: `${name}.test`, service, annotations });
    const docs = [
      ingress("cb", "slow"),
      ingress("retry", "flaky", {
        "proxy-next-upstream": "error http_503",
        "proxy-next-upstream-tries": "3",
      }),
      ingress("conn", "free", { "limit-connections": "1", "limit-allowlist": "127.0.0.4/32" }),
      services(ns, backend.server?.port as number),
      policy(ns, "slow", { maxParallelRequests: 2 }),
      policy(ns, "flaky", { maxParallelRetries: 0 }),
    ];
    await writeFile(join(dir, "cb.yaml"), docs.join("---\n"));
    const flags = ["--front", front, "--access-log-sample", "0", "--upstream-timeout-ms", "800"];
    ({ gw, port } = await startTestGateway(["--dir", dir], flags));
  });

  afterAll(async () => {
    backend?.release();
    await gw?.stop({ delayMs: 0 });
    backend?.server?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function metric(name: string, labels: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${gw.admin.port}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  const slow = () => `backend="${ns}/slow:80"`;
  const inFlight = () => metric("gatehouse_circuit_breaker_requests_in_flight", slow());
  const rejected = () =>
    metric("gatehouse_circuit_breaker_rejections_total", `${slow()},limit="parallel_requests"`);

  test("N requests in flight: the next gets 503 at once and is counted; after they end, requests pass", async () => {
    const before = await rejected();
    const held = [send(port, "cb.test", "/hold"), send(port, "cb.test", "/hold")];
    await within(3000, async () => backend.inFlight === 2);
    const t0 = performance.now();
    const third = await send(port, "cb.test", "/fast").answer;
    expect(third.status).toBe(503);
    expect(third.head).toContain("x-gatehouse-overloaded: true");
    expect(performance.now() - t0).toBeLessThan(500);
    expect(await rejected()).toBe(before + 1);
    expect(await inFlight()).toBe(2);
    backend.release();
    for (const h of held) expect((await h.answer).status).toBe(200);
    await within(2000, async () => (await inFlight()) === 0);
    const again = await Promise.all([0, 1].map(() => send(port, "cb.test", "/fast").answer));
    expect(again.map((a) => a.status)).toEqual([200, 200]);
  });

  test("the written exception: on the bun front a counted body goes chunked, the raw front keeps its length", async () => {
    // held-forward.ts: the full request path sees the body end through a stream of its own, which
    // Bun.serve sends chunked; the raw front relays the backend's framing as it came.
    const big = await send(port, "cb.test", "/big").answer;
    expect(big.status).toBe(200);
    if (front === "raw") expect(big.head).toContain("content-length: 262144");
    else expect(big.head).toContain("transfer-encoding: chunked");
    await within(2000, async () => (await inFlight()) === 0);
  });

  test("no leak when clients leave before the answer or mid-body, or the upstream times out", async () => {
    // Clients gone while the backend holds their requests.
    const gone = [send(port, "cb.test", "/hold"), send(port, "cb.test", "/hold")];
    await within(3000, async () => backend.inFlight === 2);
    for (const g of gone) g.socket.destroy();
    await within(3000, async () => (await inFlight()) === 0);
    backend.release();
    await within(3000, async () => backend.inFlight === 0);
    // Clients gone mid-body: the request is counted until its body ends.
    const streams = [send(port, "cb.test", "/stream"), send(port, "cb.test", "/stream")];
    await within(3000, async () => streams.every((s) => s.got().includes("first part;")));
    const refused = await send(port, "cb.test", "/fast").answer;
    expect(refused.status).toBe(503);
    for (const s of streams) s.socket.destroy();
    await within(3000, async () => (await inFlight()) === 0);
    backend.release();
    // An upstream that never answers: 504 after --upstream-timeout-ms, and the count comes back.
    const hung = await Promise.all([0, 1].map(() => send(port, "cb.test", "/hang").answer));
    expect(hung.map((h) => h.status)).toEqual([504, 504]);
    await within(2000, async () => (await inFlight()) === 0);
    backend.release();
    const ok = await Promise.all([0, 1].map(() => send(port, "cb.test", "/fast").answer));
    expect(ok.map((a) => a.status)).toEqual([200, 200]);
  });

  test("maxParallelRetries 0: the 503 is answered as it came, never retried, and the refusal counted", async () => {
    const before = backend.hits;
    const res = await send(port, "retry.test", "/flaky").answer;
    expect(res.status).toBe(503);
    expect(res.text).toContain("busy");
    expect(backend.hits).toBe(before + 1);
    const label = `backend="${ns}/flaky:80",limit="parallel_retries"`;
    expect(await metric("gatehouse_circuit_breaker_rejections_total", label)).toBe(1);
  });

  test("limit-connections 1: a second request from one address gets 503, another address is served", async () => {
    const first = send(port, "conn.test", "/hold", "127.0.0.2");
    await within(3000, async () => backend.inFlight === 1);
    const second = await send(port, "conn.test", "/fast", "127.0.0.2").answer;
    expect(second.status).toBe(503);
    const other = await send(port, "conn.test", "/fast", "127.0.0.3").answer;
    expect(other.status).toBe(200);
    backend.release();
    expect((await first.answer).status).toBe(200);
    const after = await send(port, "conn.test", "/fast", "127.0.0.2").answer;
    expect(after.status).toBe(200);
    expect(await metric("gatehouse_client_concurrency_rejections_total", `zone="ingress/${ns}/conn"`)).toBe(
      1,
    );
  });

  test("limit-allowlist exempts a client from limit-connections: two in flight from it are both served", async () => {
    const before = await metric("gatehouse_client_concurrency_rejections_total", `zone="ingress/${ns}/conn"`);
    const held = [
      send(port, "conn.test", "/hold", "127.0.0.4"),
      send(port, "conn.test", "/hold", "127.0.0.4"),
    ];
    await within(3000, async () => backend.inFlight === 2);
    const third = await send(port, "conn.test", "/fast", "127.0.0.4").answer;
    expect(third.status).toBe(200);
    backend.release();
    for (const h of held) expect((await h.answer).status).toBe(200);
    expect(await metric("gatehouse_client_concurrency_rejections_total", `zone="ingress/${ns}/conn"`)).toBe(
      before,
    );
  });
});
