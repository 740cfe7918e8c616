/**
 * A WebSocket holds one of its backend's connections while it lasts, as Envoy counts an upgraded
 * connection under `max_connections`, on both fronts: the raw front's pipe keeps its pool connection,
 * the Bun front counts the socket it opens (request/websocket/forward.ts). With `maxConnections: 1` and
 * one WebSocket open, a request and a second WebSocket get 503 (marked overloaded); once it closes, the
 * backend takes requests again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

forEachFront("WebSockets against connection caps", (front) => {
  const ns = `ws-caps-${front}`;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let backend: ReturnType<typeof Bun.serve>;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    backend = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req, srv) {
        if (new URL(req.url).pathname === "/ws" && srv.upgrade(req, { data: undefined })) return undefined;
        return new Response("ok");
      },
      websocket: {
        message(ws, m) {
          ws.send(m);
        },
      },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-ws-caps-"));
    const docs = [
      annotatedIngressYaml({ name: "w", namespace: ns, host: "w.test", service: "w", annotations: {} }),
      serviceYaml("w", ns, backend.port ?? 0),
      `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: w, namespace: ${ns} }
spec:
  targetRefs: [{ group: "", kind: Service, name: w }]
  circuitBreaker: { maxConnections: 1 }
`,
    ];
    await writeFile(join(dir, "w.yaml"), docs.join("---\n"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    backend?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  const open = (): Promise<{ ws: WebSocket; outcome: string }> =>
    new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: "w.test" } } as never);
      ws.onopen = () => resolve({ ws, outcome: "open" });
      ws.onerror = () => resolve({ ws, outcome: "error" });
    });
  const get = () => fetch(`http://127.0.0.1:${port}/x`, { headers: { host: "w.test" }, keepalive: false });

  test("an open WebSocket holds the only connection; closed, it gives it back", async () => {
    // The cap leaves room before the WebSocket (no pooled connection kept on either front: keepalive off).
    await within(5000, async () => (await get()).status === 200);
    const first = await open();
    expect(first.outcome).toBe("open");
    const refused = await get();
    expect(refused.status).toBe(503);
    expect(refused.headers.get("x-gatehouse-overloaded")).toBe("true");
    const second = await open();
    expect(second.outcome).toBe("error");
    first.ws.close();
    await within(10_000, async () => (await get()).status === 200);
  }, 20_000);
});
