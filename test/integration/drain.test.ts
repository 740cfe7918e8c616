/**
 * Graceful drain of a real process: on SIGTERM readiness turns false, requests keep being served through
 * the drain delay, requests in flight finish, and the process exits 0.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "../helpers/echo-server.ts";
import { defaultBackendYaml } from "../helpers/folder-fixtures.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";

let dir: string;
let echo: EchoServer;
let gw: GatewayProcess | undefined;

beforeAll(async () => {
  echo = startEchoServer({ service: "slow" });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-drain-"));
  await writeFile(join(dir, "all.yaml"), defaultBackendYaml("slow", echo.port));
});

afterAll(async () => {
  await gw?.kill();
  await echo?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("SIGTERM under load loses no accepted request and exits 0", async () => {
  gw = await startGatewayProcess(dir, [
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
