/**
 * One gateway replica with `--workers 2` and no Redis, against the test API server and its Deployment
 * controller: the primary (the only process that runs the leader election and the scale-down) asks its
 * worker for the backend's last request before it scales the workload down. A keep-alive connection
 * that the kernel gave to the worker carries all the traffic, so the primary alone would find the
 * workload idle: it must stay up while that connection is busy, and go to 0 once both are idle. Both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { DeploymentController } from "../../helpers/kube-deployment-controller.ts";
import { ingress, ns, service, within } from "../../helpers/kube-fixtures.ts";

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

/** One keep-alive HTTP/1.1 connection: every request on it goes to the process that accepted it. */
class Conn {
  readonly #socket: Socket;
  #buf = "";
  #waiting: ((status: number) => void) | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      this.#buf += d;
      const end = this.#buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = this.#buf.slice(0, end);
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (this.#buf.length < end + 4 + length) return;
      this.#buf = this.#buf.slice(end + 4 + length);
      const w = this.#waiting;
      this.#waiting = undefined;
      w?.(Number(head.split(" ")[1]));
    });
  }

  static open(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () => resolve(new Conn(s)));
      s.on("error", reject);
    });
  }

  get(): Promise<number> {
    return new Promise((resolve) => {
      this.#waiting = resolve;
      this.#socket.write("GET / HTTP/1.1\r\nhost: fn.test\r\n\r\n");
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}

forEachFront("scale to zero with --workers 2 and no Redis", (front) => {
  let api: KubeApiServer;
  let controller: DeploymentController;
  let dir: string;
  let gw: GatewayProcess | undefined;
  let workerAdmin = 0;

  const replicas = () => api.get("Deployment", ns, "fn").spec.replicas as number;
  const report = async (port: number) =>
    ((await (await fetch(`http://127.0.0.1:${port}/debug/activation`)).json()) as Obj[])[0];
  const requests = async (port: number) => ((await report(port))?.totals?.requests ?? 0) as number;

  beforeAll(async () => {
    api = await KubeApiServer.start({ tokens: ["a"], bookmarkIntervalMs: 200 });
    controller = new DeploymentController(api, {
      services: { fn: "fn" },
      readyDelayMs: 200,
      startPod: (name) => {
        const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ pod: name }) });
        return { port: s.port as number, stop: () => s.stop(true) };
      },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-scale-workers-"));
    api.create(service("fn"));
    api.create(DeploymentController.deployment("fn", ns, 0));
    api.create(ingress("fn", "fn.test", "/", "fn"));
    api.create(policy);
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"), "a");
    gw = await startGatewayProcess(
      ["--kube", "--kubeconfig", kubeconfig],
      [
        ...["--front", front, "--workers", "2"],
        ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
        ...["--access-log-sample", "0", "--log-level", "info"],
      ],
    );
    const g = gw;
    // Each process logs "gatehouse serving" with its admin port once started; the worker's is ephemeral.
    await within(10_000, () => {
      const ports = [...g.output().matchAll(/gatehouse serving[^\n]*"admin":(\d+)/g)].map((m) =>
        Number(m[1]),
      );
      workerAdmin = ports.find((p) => p !== g.adminPort) ?? 0;
      return workerAdmin > 0;
    });
    const holder = () => {
      try {
        return (
          (api.get("Lease", "gatehouse-system", "gatehouse-leader").spec?.holderIdentity as string) ?? ""
        );
      } catch {
        return "";
      }
    };
    await within(5000, () => holder().endsWith(`_${g.proc.pid}`));
    await within(5000, async () => (await report(workerAdmin)) !== undefined);
  });

  afterAll(async () => {
    await gw?.kill();
    controller?.stop();
    await api?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("not scaled down while the worker is busy; scaled down once both processes are idle", async () => {
    const g = gw as GatewayProcess;
    const condition = () =>
      (api.get("ScaleToZeroPolicy", ns, "fn").status?.ancestors?.[0]?.conditions as Obj[] | undefined)?.find(
        (c) => c.type === "Scaling",
      );
    await within(5000, () => condition()?.reason === "Active");

    // A connection the kernel gave to the worker (the first request on it wakes the workload).
    let conn: Conn | undefined;
    for (let i = 0; i < 50 && conn === undefined; i++) {
      const c = await Conn.open(g.httpPort);
      const before = await requests(workerAdmin);
      expect(await c.get()).toBe(200);
      if ((await requests(workerAdmin)) > before) conn = c;
      else c.close();
    }
    if (conn === undefined) throw new Error("no connection landed on the worker");
    expect(replicas()).toBe(1);
    const primaryRequests = await requests(g.adminPort);

    // Busy on the worker only, for well over two idle periods: the primary alone would find it idle.
    const busyUntil = performance.now() + idleMs * 2.5;
    while (performance.now() < busyUntil) {
      expect(await conn.get()).toBe(200);
      expect(replicas()).toBe(1);
      await Bun.sleep(200);
    }
    const lastRequest = performance.now();
    expect(await requests(g.adminPort)).toBe(primaryRequests);
    expect(((await report(g.adminPort))?.idleMs as number) > idleMs).toBe(true);
    expect(controller.events).toEqual(["up:fn"]);

    // Both idle: the primary scales it to 0 after the idle period, once.
    await within(idleMs + 5000, () => replicas() === 0);
    expect(performance.now() - lastRequest).toBeGreaterThanOrEqual(idleMs - 200);
    expect(controller.events).toEqual(["up:fn", "down:fn"]);
    conn.close();
    // Summed over both processes by the primary's /metrics: one scale-down in all.
    await within(2000, async () =>
      /gatehouse_backend_activations_total\{[^}]*direction="down"[^}]*\} 1\n/.test(
        await (await fetch(`http://127.0.0.1:${g.adminPort}/metrics`)).text(),
      ),
    );
  }, 40_000);
});
