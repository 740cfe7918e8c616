/**
 * `--workers 2`: two processes share the traffic port (SO_REUSEPORT) and the primary's /metrics reports
 * the requests both served, not only its own. Run on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { defaultBackendYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";

function requestsServed(text: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("gatehouse_requests_total{") && line.includes('code_class="2xx"'))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

forEachFront("--workers 2", (front) => {
  let dir: string;
  let echo: EchoServer;
  let gw: GatewayProcess | undefined;

  beforeAll(async () => {
    echo = startEchoServer({ service: "web" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-workers-"));
    await writeFile(join(dir, "all.yaml"), defaultBackendYaml("web", echo.port));
    gw = await startGatewayProcess(dir, ["--front", front, "--workers", "2", "--access-log-sample", "0"]);
  });

  afterAll(async () => {
    await gw?.kill();
    await echo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("the primary's /metrics counts the requests of every worker", async () => {
    const g = gw as GatewayProcess;
    // Both processes print "gatehouse serving" once started; the worker reports its admin port just then.
    const deadline = Date.now() + 10_000;
    while (g.output().split("gatehouse serving").length < 3 && Date.now() < deadline) await Bun.sleep(50);
    await Bun.sleep(100);
    const n = 200;
    for (let i = 0; i < n; i += 20) {
      // A new connection per request, so the kernel spreads them over both processes.
      await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`http://127.0.0.1:${g.httpPort}/x`, { headers: { connection: "close" } }).then((r) =>
            r.text(),
          ),
        ),
      );
    }
    const text = await (await fetch(`http://127.0.0.1:${g.adminPort}/metrics`)).text();
    expect(requestsServed(text)).toBe(n);
  }, 30_000);
});
