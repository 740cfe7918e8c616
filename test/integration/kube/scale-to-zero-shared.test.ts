/**
 * Two `gatehouse serve --kube` processes (two gateway replicas) sharing the idle clock through a real
 * redis-server (`--redis-url`), against the test API server and its Deployment controller: the leader
 * sees no request at all while the other replica is busy, and must not scale the workload down; once
 * both are idle for the policy's idlePeriod, the leader does. The follower is the one that woke the
 * workload, so the leader has no cooldown of its own to hide behind. Both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { DeploymentController } from "../../helpers/kube-deployment-controller.ts";
import { ingress, ns, service, within } from "../../helpers/kube-fixtures.ts";
import { type RedisServer, startRedis } from "../../helpers/redis.ts";

const idleMs = 2000;

const policy: Obj = {
  apiVersion: "gatehouse.dev/v1alpha1",
  kind: "ScaleToZeroPolicy",
  metadata: { name: "fn", namespace: ns },
  spec: {
    targetRefs: [{ group: "", kind: "Service", name: "fn" }],
    workload: { kind: "Deployment", name: "fn" },
    idlePeriod: `${idleMs}ms`,
    maxHoldTime: "5s",
  },
};

forEachFront("scale to zero with two gateway replicas sharing the idle time through Redis", (front) => {
  let api: KubeApiServer;
  let controller: DeploymentController;
  let redis: RedisServer;
  let dir: string;
  const gateways: GatewayProcess[] = [];

  const start = async (token: string) => {
    const kubeconfig = await api.writeKubeconfig(join(dir, `kubeconfig-${token}`), token);
    const gp = await startGatewayProcess(
      ["--kube", "--kubeconfig", kubeconfig],
      [
        ...["--front", front, "--workers", "1", "--redis-url", redis.url],
        ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
        ...["--access-log-sample", "0", "--log-level", "warn"],
      ],
    );
    gateways.push(gp);
    return gp;
  };
  const holder = (): string => {
    try {
      return (api.get("Lease", "gatehouse-system", "gatehouse-leader").spec?.holderIdentity as string) ?? "";
    } catch {
      return "";
    }
  };
  const replicas = () => api.get("Deployment", ns, "fn").spec.replicas as number;
  const get = async (gp: GatewayProcess) => {
    const res = await fetch(`http://127.0.0.1:${gp.httpPort}/`, { headers: { host: "fn.test" } });
    return { status: res.status, body: await res.text() };
  };

  beforeAll(async () => {
    redis = await startRedis();
    api = await KubeApiServer.start({ tokens: ["a", "b"], bookmarkIntervalMs: 200 });
    controller = new DeploymentController(api, {
      services: { fn: "fn" },
      readyDelayMs: 200,
      startPod: (name) => {
        const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ pod: name }) });
        return { port: s.port as number, stop: () => s.stop(true) };
      },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-scale-shared-"));
    api.create(service("fn"));
    api.create(DeploymentController.deployment("fn", ns, 0));
    api.create(ingress("fn", "fn.test", "/", "fn"));
    api.create(policy);
  });

  afterAll(async () => {
    for (const gp of gateways.splice(0)) await gp.kill();
    controller?.stop();
    await api?.stop();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("not scaled down while the follower is busy; scaled down once both are idle", async () => {
    const leader = await start("a");
    await within(5000, () => holder().endsWith(`_${leader.proc.pid}`));
    const busy = await start("b");
    // The leader has already found the (sleeping) workload idle at 0 once: that must not keep it from
    // scaling down later, after traffic it never saw itself.
    await within(idleMs + 5000, async () => {
      const [a] = (await (
        await fetch(`http://127.0.0.1:${leader.adminPort}/debug/activation`)
      ).json()) as Obj[];
      return (a?.idleMs ?? 0) > idleMs + 1200;
    });

    // The follower takes the first request: it wakes the workload (the leader never sees a request).
    expect(await get(busy)).toEqual({ status: 200, body: JSON.stringify({ pod: "fn" }) });
    expect(replicas()).toBe(1);

    // Busy on the follower for well over two idle periods: the leader alone would find it idle.
    const busyUntil = performance.now() + idleMs * 2.5;
    while (performance.now() < busyUntil) {
      expect((await get(busy)).status).toBe(200);
      expect(replicas()).toBe(1);
      await Bun.sleep(200);
    }
    const lastRequest = performance.now();
    expect(controller.events).toEqual(["up:fn"]);
    expect(holder().endsWith(`_${leader.proc.pid}`)).toBe(true);

    // Both idle: the leader scales it to 0 after the idle period (plus a publish and a tick).
    await within(idleMs + 5000, () => replicas() === 0).catch(async (e) => {
      for (const g of [leader, busy])
        console.log(
          g.output(),
          JSON.stringify(await (await fetch(`http://127.0.0.1:${g.adminPort}/debug/activation`)).json()),
        );
      console.log(await redis.command("KEYS", "*"), Date.now());
      throw e;
    });
    const after = performance.now() - lastRequest;
    expect(after).toBeGreaterThanOrEqual(idleMs - 200);
    expect(controller.events).toEqual(["up:fn", "down:fn"]);
    // One scale-down in all, counted once its write is answered (just after the API server stored it),
    // by whichever replica held the lease then.
    const downs = async () => {
      let n = 0;
      for (const g of [leader, busy]) {
        const text = await (await fetch(`http://127.0.0.1:${g.adminPort}/metrics`)).text();
        n += Number(
          /gatehouse_backend_activations_total\{[^}]*direction="down"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0,
        );
      }
      return n;
    };
    await within(2000, async () => (await downs()) === 1);
    expect(await downs()).toBe(1);
    const leaderMetrics = await (await fetch(`http://127.0.0.1:${leader.adminPort}/metrics`)).text();
    expect(leaderMetrics).toMatch(/gatehouse_backend_requests_total\{[^}]*backend="demo\/fn:80"[^}]*\} 0/);
  }, 40_000);
});
