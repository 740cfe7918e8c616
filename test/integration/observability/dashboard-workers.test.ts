/**
 * `--workers 2`: the dashboard on the primary's admin port counts the requests both processes served
 * (as its /metrics does), not only its own. Run on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { defaultBackendYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";

interface Stats {
  routes: { route: string; counts: number[] }[];
}

forEachFront("the dashboard with --workers 2", (front) => {
  let dir: string;
  let echo: EchoServer;
  let gw: GatewayProcess | undefined;

  beforeAll(async () => {
    echo = startEchoServer({ service: "web" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-dashboard-workers-"));
    await writeFile(join(dir, "all.yaml"), defaultBackendYaml("web", echo.port));
    gw = await startGatewayProcess(dir, ["--front", front, "--workers", "2", "--access-log-sample", "0"]);
  });

  afterAll(async () => {
    await gw?.kill();
    await echo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("/api/stats adds up every process's requests", async () => {
    const g = gw as GatewayProcess;
    // Both processes print "gatehouse serving" once started; the worker reports its admin port just then.
    const deadline = Date.now() + 10_000;
    while (g.output().split("gatehouse serving").length < 3 && Date.now() < deadline) await Bun.sleep(50);
    await Bun.sleep(100);
    const n = 200;
    for (let i = 0; i < n; i += 20)
      // A new connection per request, so the kernel spreads them over both processes.
      await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`http://127.0.0.1:${g.httpPort}/x`, { headers: { connection: "close" } }).then((r) =>
            r.text(),
          ),
        ),
      );
    const admin = `http://127.0.0.1:${g.adminPort}`;
    // The primary's own share is below n: the sum can only reach n with the worker's counters.
    const own = (await (await fetch(`${admin}/api/route-totals`)).json()) as Record<
      string,
      { count: number }
    >;
    const ownCount = Object.values(own).reduce((a, r) => a + r.count, 0);
    expect(ownCount).toBeLessThan(n);
    let total = 0;
    // The workers' counters are read at most about once a second.
    for (let i = 0; i < 30 && total !== n; i++) {
      await Bun.sleep(100);
      const stats = (await (await fetch(`${admin}/api/stats`)).json()) as Stats;
      total = stats.routes.reduce((a, r) => a + r.counts.reduce((x, y) => x + y, 0), 0);
    }
    expect(total).toBe(n);
  }, 30_000);
});
