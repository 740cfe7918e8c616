/**
 * Graceful drain of a real process: on SIGTERM readiness turns false, requests keep being served through
 * the drain delay, requests in flight finish, and the process exits 0; a request that outlasts
 * --drain-timeout-ms is cut at the deadline and the process still exits 0. Run on both fronts.
 * (drain-keepalive.test.ts: clients sending through the signal; drain-library.test.ts: the same through
 * `stop()`.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { defaultBackendYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";

let dir: string;
let echo: EchoServer;

beforeAll(async () => {
  echo = startEchoServer({ service: "slow" });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-drain-"));
  await writeFile(join(dir, "all.yaml"), defaultBackendYaml("slow", echo.port));
});

afterAll(async () => {
  await echo?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

forEachFront("drain on SIGTERM", (front) => {
  let gw: GatewayProcess | undefined;
  let late: GatewayProcess | undefined;

  afterAll(async () => {
    await gw?.kill();
    await late?.kill();
  });

  test("SIGTERM under load loses no accepted request and exits 0", async () => {
    gw = await startGatewayProcess(dir, [
      "--front",
      front,
      "--workers",
      "1",
      "--drain-delay-ms",
      "400",
      "--drain-timeout-ms",
      "5000",
    ]);
    const base = `http://127.0.0.1:${gw.httpPort}`;
    // 40 slow requests in flight when the signal arrives…
    const inFlight = Array.from({ length: 40 }, () =>
      fetch(`${base}/slow?delay=600ms`, { headers: { host: "any" } }).then((r) => r.status),
    );
    await Bun.sleep(150);
    gw.proc.kill("SIGTERM");
    await Bun.sleep(100);
    // …readiness is false at once, but new requests are still served during the drain delay…
    expect((await fetch(`http://127.0.0.1:${gw.adminPort}/readyz`)).status).toBe(503);
    const duringDelay = await fetch(`${base}/new`, { headers: { host: "any" } });
    expect(duringDelay.status).toBe(200);
    // …and every request accepted before the drain completes with 200.
    const statuses = await Promise.all(inFlight);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(await gw.proc.exited).toBe(0);
    // Afterwards nothing listens any more.
    await expect(fetch(`${base}/late`, { headers: { host: "any" } })).rejects.toThrow();
  }, 20_000);

  test("a request longer than --drain-timeout-ms: cut at the deadline, logged, exit 0", async () => {
    late = await startGatewayProcess(dir, [
      "--front",
      front,
      "--workers",
      "1",
      "--drain-delay-ms",
      "100",
      "--drain-timeout-ms",
      "500",
    ]);
    const base = `http://127.0.0.1:${late.httpPort}`;
    const stuck = fetch(`${base}/stuck?delay=10s`, { headers: { host: "any" } }).then(
      (r) => r.text().then(() => "answered"),
      () => "cut",
    );
    await Bun.sleep(150);
    const signalled = performance.now();
    late.proc.kill("SIGTERM");
    expect(await late.proc.exited).toBe(0);
    const ms = performance.now() - signalled;
    // Delay plus deadline, then out: not held by the 10 s request.
    expect(ms).toBeGreaterThan(550);
    expect(ms).toBeLessThan(3000);
    expect(await stuck).toBe("cut");
    expect(late.output()).toContain("drain deadline reached");
  }, 20_000);
});
