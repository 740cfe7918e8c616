/**
 * Activation in folder mode, where there is no workload to scale (docs/scale-to-zero.md, "Try it without
 * a cluster"): a request for a backend with a ScaleToZeroPolicy and no ready endpoint is held, shows in
 * /debug/activation, and is released when the folder's EndpointSlice gets a ready endpoint; a request
 * whose body is over the policy's cap (declared, or chunked) gets 503; the policy says NoScaler; an open
 * WebSocket counts in flight (it keeps the workload up) until it closes. Both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const manifests = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: fn, namespace: default }
spec:
  ingressClassName: gatehouse
  rules:
    - host: fn.test
      http:
        paths: [{ path: /, pathType: Prefix, backend: { service: { name: fn, port: { number: 80 } } } }]
---
apiVersion: v1
kind: Service
metadata: { name: fn, namespace: default }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: gatehouse.dev/v1alpha1
kind: ScaleToZeroPolicy
metadata: { name: fn, namespace: default }
spec:
  targetRefs: [{ group: "", kind: Service, name: fn }]
  workload: { kind: Deployment, name: fn }
  maxHoldTime: 5s
  maxHeldBodyBytes: 1000
`;

const sliceYaml = (port: number | undefined) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: fn-1, namespace: default, labels: { kubernetes.io/service-name: fn } }
addressType: IPv4
endpoints: [${port === undefined ? "" : "{ addresses: [127.0.0.1] }"}]
ports: [{ name: http, port: ${port ?? 1} }]
`;

forEachFront("activation in folder mode", (front) => {
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let pod: ReturnType<typeof Bun.serve>;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    pod = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req, srv) => {
        if (req.headers.get("upgrade") === "websocket" && srv.upgrade(req, { data: undefined })) return;
        return Response.json({ pod: "fn", body: await req.text() });
      },
      websocket: { message: (ws, m) => void ws.send(m) },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-folder-wake-"));
    await writeFile(join(dir, "fn.yaml"), manifests);
    await writeFile(join(dir, "slice.yaml"), sliceYaml(undefined));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]));
  });

  afterAll(async () => {
    await gw?.stop();
    pod?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const admin = async (path: string) => (await fetch(`http://127.0.0.1:${gw.admin.port}${path}`)).json();

  test("a body over the cap gets 503 at once, without being held", async () => {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`, {
      method: "POST",
      headers: { host: "fn.test" },
      body: "x".repeat(2000),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(performance.now() - t).toBeLessThan(1000);
  });

  test("a chunked body passing the cap while held gets 503", async () => {
    const chunks = ["a".repeat(600), "b".repeat(600)];
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = chunks.shift();
        if (next === undefined) c.close();
        else c.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await fetch(`http://127.0.0.1:${port}/`, {
      method: "POST",
      headers: { host: "fn.test" },
      body,
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
  });

  test("held until the folder's EndpointSlice is ready, then served with its body", async () => {
    const answer = fetch(`http://127.0.0.1:${port}/`, {
      method: "POST",
      headers: { host: "fn.test" },
      body: "hello",
    });
    // biome-ignore lint/suspicious/noExplicitAny: the admin's JSON
    await within(3000, async () => ((await admin("/debug/activation")) as any[])[0]?.held === 1);
    // biome-ignore lint/suspicious/noExplicitAny: the admin's JSON
    const statuses = (await admin("/debug/status")) as any[];
    const policy = statuses.find((s) => s.target.kind === "ScaleToZeroPolicy");
    expect(policy.status.ancestors[0].conditions[1]).toMatchObject({
      type: "Scaling",
      status: "False",
      reason: "NoScaler",
    });
    await writeFile(join(dir, "slice.yaml"), sliceYaml(pod.port as number));
    const res = await answer;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ pod: "fn", body: "hello" });
    // biome-ignore lint/suspicious/noExplicitAny: the admin's JSON
    const after = ((await admin("/debug/activation")) as any[])[0];
    expect(after).toMatchObject({ held: 0, endpoints: 1 });
    expect(after.totals.released).toBeGreaterThanOrEqual(1);
  });

  test("an open WebSocket counts in flight until it closes", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the admin's JSON
    const inflight = async () => ((await admin("/debug/activation")) as any[])[0]?.inflight as number;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: "fn.test" } });
    const echoed = new Promise<string>((resolve, reject) => {
      ws.onmessage = (e) => resolve(String(e.data));
      ws.onerror = () => reject(new Error("websocket failed"));
    });
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onclose = () => reject(new Error("websocket closed before it opened"));
    });
    ws.send("ping");
    expect(await echoed).toBe("ping");
    await Bun.sleep(300);
    expect(await inflight()).toBe(1);
    ws.close();
    await within(3000, async () => (await inflight()) === 0);
  });
});
