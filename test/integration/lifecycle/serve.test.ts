/**
 * The whole pipeline in one process: a YAML folder → FolderSource → translate → GatewayServer, with real
 * echo backends. Covers reloads, bad input keeping the last good routes, and the admin endpoints, on
 * both fronts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

function ingress(name: string, host: string, path: string, service: string, extra = ""): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: demo }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${host}
      http:
        paths:
          - path: ${path}
            pathType: Prefix${extra}
            backend: { service: { name: ${service}, port: { number: 80 } } }
`;
}

function service(name: string, echoPort: number): string {
  return `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: demo }
spec: { ports: [{ name: http, port: 80, targetPort: 8000 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, namespace: demo, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${echoPort} }]
`;
}

forEachFront("gatehouse serve --dir", (front) => {
  let dir: string;
  let web: EchoServer;
  let api: EchoServer;
  let gw: RunningGateway;
  let port: number;
  const logs: string[] = [];
  let restoreSink: ((line: string) => void) | undefined;

  async function get(host: string, path: string): Promise<{ status: number; service?: string }> {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { host } });
    const text = await res.text();
    const service = res.headers.get("content-type")?.includes("json") ? JSON.parse(text).service : undefined;
    return { status: res.status, service };
  }

  /** Write a file and wait until the gateway applied the resulting snapshot. */
  async function writeAndApply(file: string, text: string): Promise<void> {
    const applied = gw.nextApply();
    await writeFile(join(dir, file), text);
    await applied;
  }

  beforeAll(async () => {
    restoreSink = setLogSink((line) => logs.push(line));
    web = startEchoServer({ service: "web", namespace: "demo" });
    api = startEchoServer({ service: "api", namespace: "demo" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-serve-"));
    await writeFile(
      join(dir, "services.yaml"),
      `${service("web", web.port)}---\n${service("api", api.port)}`,
    );
    await writeFile(join(dir, "web.yaml"), ingress("web", "demo.test", "/", "web"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front], 20));
  });

  afterAll(async () => {
    await gw?.stop();
    await web?.stop();
    await api?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  test("serves the folder's routes; unknown host is 404", async () => {
    expect(await get("demo.test", "/anything")).toEqual({ status: 200, service: "web" });
    expect((await get("other.test", "/")).status).toBe(404);
  });

  test("a new file is picked up without a restart", async () => {
    await writeAndApply("api.yaml", ingress("api", "demo.test", "/api", "api"));
    expect(await get("demo.test", "/api/x")).toEqual({ status: 200, service: "api" });
    expect(await get("demo.test", "/apix")).toEqual({ status: 200, service: "web" });
  });

  test("a broken file is reported and its last good version keeps serving", async () => {
    await writeAndApply("api.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: [oops\n");
    expect(await get("demo.test", "/api/x")).toEqual({ status: 200, service: "api" });
    expect(logs.some((l) => l.includes("api.yaml"))).toBe(true);
  });

  test("an invalid object is reported by name and reason; everything else keeps serving", async () => {
    await writeAndApply("bad.yaml", ingress("bad", "Bad.Test", "/", "web"));
    expect(await get("demo.test", "/")).toEqual({ status: 200, service: "web" });
    const line = logs.find((l) => l.includes("Bad.Test"));
    expect(line).toBeDefined();
    expect(line).toContain("bad");
  });

  test("a route to a Service that does not exist answers 503", async () => {
    await writeAndApply("ghost.yaml", ingress("ghost", "ghost.test", "/", "nope"));
    expect((await get("ghost.test", "/")).status).toBe(503);
  });

  test("admin endpoints: ready, and the model names its routes", async () => {
    const admin = `http://127.0.0.1:${gw.admin.port}`;
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
    expect((await fetch(`${admin}/readyz`)).status).toBe(200);
    const model = await (await fetch(`${admin}/debug/model`)).text();
    expect(model).toContain("ingress/demo/web/rule/0/path/0");
  });
});

// Flag checks at startup: the process exits before any listener opens, so no front is involved.
describe("gatehouse serve flags", () => {
  const main = join(resolve(import.meta.dir, "../../.."), "src/main.ts");
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gatehouse-serve-flags-"));
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const serve = (ports: string[]) =>
    Bun.spawn([process.execPath, main, "serve", "--dir", dir, "--bind", "127.0.0.1", ...ports], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });

  test("--admin-port on a traffic port: exit 2 at startup, naming the flag", async () => {
    for (const traffic of ["--http-port", "--https-port"]) {
      const proc = serve([traffic, "18181", "--admin-port", "18181"]);
      expect(await proc.exited).toBe(2);
      expect(await new Response(proc.stderr).text()).toContain(
        "--admin-port: must differ from --http-port and --https-port",
      );
    }
  });
});
