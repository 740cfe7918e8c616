/**
 * Drain through the library API (`RunningGateway.stop`), on both fronts: readiness stays false once the
 * drain began even when the folder changes during the delay, and a request still running at the
 * deadline is cut when stop() resolves, not left to a process exit.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { defaultBackendYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

let echo: EchoServer;
const logs: string[] = [];
let restoreSink: ((line: string) => void) | undefined;
const dirs: string[] = [];

beforeAll(() => {
  restoreSink = setLogSink((line) => logs.push(line));
  echo = startEchoServer({ service: "app" });
});

afterAll(async () => {
  if (restoreSink) setLogSink(restoreSink);
  await echo?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-drain-lib-"));
  dirs.push(dir);
  await writeFile(join(dir, "all.yaml"), defaultBackendYaml("app", echo.port));
  return dir;
}

/** An Ingress for `host` on the same Service, to change the configuration during the drain. */
function hostIngress(host: string): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: late, namespace: default }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${host}
      http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: app, port: { number: 80 } } } }] }
`;
}

forEachFront("drain through stop()", (front) => {
  test("a config change during the drain delay does not make the gateway ready again", async () => {
    const dir = await folder();
    const { gw, port } = await startTestGateway(["--dir", dir], ["--front", front]);
    const readyz = `http://127.0.0.1:${gw.admin.port}/readyz`;
    let stopping: Promise<void> | undefined;
    try {
      expect((await fetch(readyz)).status).toBe(200);
      stopping = gw.stop({ delayMs: 1500, timeoutMs: 2000 });
      expect((await fetch(readyz)).status).toBe(503);
      const applied = gw.nextApply();
      await writeFile(join(dir, "late.yaml"), hostIngress("late.test"));
      const outcome = await Promise.race([applied.then(() => "applied"), Bun.sleep(1200).then(() => "none")]);
      // The source still ran and the change is served (so the apply really happened)…
      expect(outcome).toBe("applied");
      const late = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "late.test" } });
      expect(late.status).toBe(200);
      await late.text();
      // …yet readiness stayed false.
      expect((await fetch(readyz)).status).toBe(503);
      expect(gw.state.ready).toBe(false);
    } finally {
      // A failed assertion still stops the gateway (once: stop() is not meant to be called twice).
      await (stopping ?? gw.stop({ timeoutMs: 100 }));
    }
  }, 10_000);

  test("past the drain deadline stop() cuts the requests still running", async () => {
    const dir = await folder();
    const { gw, port } = await startTestGateway(["--dir", dir], ["--front", front]);
    logs.length = 0;
    const slow = fetch(`http://127.0.0.1:${port}/slow?delay=8s`, { headers: { host: "any" } }).then(
      async (r) => `answered ${r.status} ${(await r.text()).length}`,
      (err: Error) => `cut: ${err.message}`,
    );
    await Bun.sleep(150);
    const started = performance.now();
    // Nothing can fail before this line: the gateway is always stopped.
    await gw.stop({ delayMs: 0, timeoutMs: 300 });
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(2000);
    expect(logs.some((l) => l.includes("drain deadline reached"))).toBe(true);
    // Cut by stop() itself: the client knows within a moment, not when the upstream answers at 8 s.
    const outcome = await Promise.race([slow, Bun.sleep(1000).then(() => "still open")]);
    expect(outcome).toStartWith("cut");
    // And nothing listens on the traffic port any more.
    await expect(fetch(`http://127.0.0.1:${port}/`, { headers: { host: "any" } })).rejects.toThrow();
  }, 10_000);
});
