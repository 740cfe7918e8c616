/**
 * Two `gatehouse serve --kube` processes against one test API server: both serve, exactly one (the Lease
 * holder) writes status; SIGKILL the leader and the other takes over within the lease duration. Run on
 * both fronts: both processes are asked for an Ingress route on their HTTP port.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer } from "../../helpers/kube-api-server.ts";
import {
  gateway,
  gatewayClass,
  ingress,
  ns,
  probe,
  service,
  slice,
  within,
} from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";

const main = join(resolve(import.meta.dir, "../../.."), "src/main.ts");
const leaseMs = 2000;

interface Proc {
  readonly token: string;
  readonly proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  readonly httpPort: number;
}

forEachFront("leader election", (front) => {
  let api: KubeApiServer;
  let web: EchoServer;
  let dir: string;
  const procs: Proc[] = [];

  async function spawnGateway(token: string): Promise<Proc> {
    const kubeconfig = await api.writeKubeconfig(join(dir, `kubeconfig-${token}`), token);
    const httpPort = await freePort();
    const adminPort = await freePort();
    const proc = Bun.spawn(
      [
        process.execPath,
        main,
        "serve",
        "--front",
        front,
        "--kube",
        "--kubeconfig",
        kubeconfig,
        "--bind",
        "127.0.0.1",
        "--http-port",
        String(httpPort),
        "--admin-port",
        String(adminPort),
        "--workers",
        "1",
        "--debounce-ms",
        "10",
        "--lease-duration-ms",
        String(leaseMs),
        "--leader-election-namespace",
        "gatehouse-system",
        "--status-address",
        "198.51.100.1",
        "--log-level",
        "warn",
      ],
      { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, POD_NAME: `gw-${token}` } },
    );
    const p = { token, proc, httpPort };
    procs.push(p);
    await within(15_000, async () => {
      try {
        return (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200;
      } catch {
        return false;
      }
    });
    return p;
  }

  const holder = () => {
    try {
      return api.get("Lease", "gatehouse-system", "gatehouse-leader").spec?.holderIdentity as
        | string
        | undefined;
    } catch {
      return undefined;
    }
  };
  const statusWriters = (since: number) =>
    new Set(
      api.calls
        .slice(since)
        .filter((c) => c.verb === "patch" && c.subresource === "status")
        .map((c) => c.token),
    );

  beforeAll(async () => {
    api = await KubeApiServer.start({ tokens: ["a", "b"], bookmarkIntervalMs: 200 });
    web = startEchoServer({ service: "web", namespace: ns });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-leader-"));
    api.create(service("web"));
    api.create(slice("web", [web.port]));
    api.create(ingress("web", "web.test", "/", "web"));
    api.create(gatewayClass());
    api.create(gateway("gw", await freePort()));
  });

  afterAll(async () => {
    for (const p of procs) {
      if (p.proc.exitCode === null) p.proc.kill("SIGKILL");
      await p.proc.exited;
    }
    await api?.stop();
    await web?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("two gateways: both serve, exactly one writes status; the leader killed, the other takes over", async () => {
    const a = await spawnGateway("a");
    await within(5000, () => holder() === `gw-a_${a.proc.pid}`);
    const b = await spawnGateway("b");
    expect(await probe(b.httpPort, "web.test")).toEqual({ status: 200, service: "web" });
    expect(await probe(a.httpPort, "web.test")).toEqual({ status: 200, service: "web" });
    await within(
      5000,
      () => api.get("Ingress", ns, "web").status?.loadBalancer?.ingress?.[0]?.ip === "198.51.100.1",
    );

    // Changes that need status: only the leader writes.
    const mark = api.calls.length;
    for (let i = 0; i < 3; i++) api.create(ingress(`more-${i}`, `more-${i}.test`, "/", "web"));
    await within(5000, () =>
      [0, 1, 2].every((i) => api.get("Ingress", ns, `more-${i}`).status?.loadBalancer),
    );
    await Bun.sleep(leaseMs); // give a wrongly-writing follower time to show itself
    expect(statusWriters(mark)).toEqual(new Set(["a"]));
    expect(holder()).toBe(`gw-a_${a.proc.pid}`);

    // Kill the leader without a chance to release the lease: b must take over within the lease duration,
    // counted from the kill (leader.ts: at worst a retry period plus 70% of the duration after the last
    // renewal, plus round trips).
    a.proc.kill("SIGKILL");
    const killedAt = performance.now();
    await within(leaseMs * 2, () => holder() === `gw-b_${b.proc.pid}`);
    const takeover = performance.now() - killedAt;
    process.stderr.write(
      `leader takeover after SIGKILL [${front} front]: ${takeover.toFixed(0)} ms (lease ${leaseMs} ms)\n`,
    );
    expect(takeover).toBeLessThan(leaseMs);

    const mark2 = api.calls.length;
    api.create(ingress("late", "late.test", "/", "web"));
    await within(
      5000,
      () => api.get("Ingress", ns, "late").status?.loadBalancer?.ingress?.[0]?.ip === "198.51.100.1",
    );
    expect(statusWriters(mark2)).toEqual(new Set(["b"]));

    // A graceful stop hands the lease over (holder emptied) instead of making others wait.
    b.proc.kill("SIGINT");
    await b.proc.exited;
    expect(holder()).toBe("");
  }, 40_000);
});
