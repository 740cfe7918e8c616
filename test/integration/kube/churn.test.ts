/**
 * EndpointSlice churn under load, the way a rollout does it: a new pod starts and then appears ready in
 * its slice; an old pod is first marked not ready (terminating), stops only after that had time to
 * propagate, and its slice goes away. Requests run all the while; none may fail. Run on both fronts:
 * the requests go to the Ingress HTTP port.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer } from "../../helpers/kube-api-server.ts";
import { ingress, ns, probe, service, slice, within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

forEachFront("EndpointSlice churn", (front) => {
  let api: KubeApiServer;
  let gw: RunningGateway;
  let port: number;
  let dir: string;
  const pods = new Map<string, EchoServer>();
  let restore: ((line: string) => void) | undefined;

  async function startPod(name: string): Promise<void> {
    const pod = startEchoServer({ service: "app", namespace: ns, pod: name });
    pods.set(name, pod);
    api.create(slice("app", [pod.port], [true], `app-${name}`));
  }

  async function stopPod(name: string): Promise<void> {
    const pod = pods.get(name) as EchoServer;
    const s = api.get("EndpointSlice", ns, `app-${name}`);
    s.endpoints[0].conditions = { ready: false, serving: true, terminating: true };
    api.apply(s);
    await Bun.sleep(150); // the proxy stops picking it well within this (propagation is ~10 ms)
    api.remove("EndpointSlice", ns, `app-${name}`);
    await pod.stop();
    pods.delete(name);
  }

  beforeAll(async () => {
    restore = setLogSink(() => {});
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-churn-"));
    api.create(service("app"));
    api.create(ingress("app", "app.test", "/", "app"));
    await startPod("p0");
    await startPod("p1");
    const kubeconfig = await api.writeKubeconfig(join(dir, "kc"));
    ({ gw, port } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      ["--front", front, "--read-only"],
    ));
    await within(2000, async () => (await probe(port, "app.test")).status === 200);
  });

  afterAll(async () => {
    await gw?.stop({ timeoutMs: 1000 });
    await api?.stop();
    for (const pod of pods.values()) await pod.stop();
    pods.clear();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  test("pods added and removed under load: no failed request", async () => {
    let running = true;
    const counts = { ok: 0, failed: 0 };
    const seenPods = new Set<string>();
    const client = async () => {
      while (running) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "app.test" } });
          const body = await res.text();
          if (res.status === 200) {
            counts.ok++;
            seenPods.add(JSON.parse(body).pod);
          } else counts.failed++;
        } catch {
          counts.failed++;
        }
      }
    };
    const clients = Array.from({ length: 6 }, client);
    let next = 2;
    for (let round = 0; round < 6; round++) {
      await startPod(`p${next++}`);
      await Bun.sleep(60);
      const oldest = [...pods.keys()][0] as string;
      await stopPod(oldest);
    }
    running = false;
    await Promise.all(clients);
    process.stderr.write(
      `endpoint churn [${front} front]: ${counts.ok} requests ok, ${counts.failed} failed, pods seen ${seenPods.size}\n`,
    );
    expect(counts.failed).toBe(0);
    expect(counts.ok).toBeGreaterThan(200);
    expect(seenPods.size).toBeGreaterThanOrEqual(6); // traffic really moved across the churned pods
  }, 30_000);
});
