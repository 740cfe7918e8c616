/**
 * `custom-http-errors` with `default-backend` (and `disable-proxy-intercept-errors`), live on both fronts
 * from a folder of Ingresses: a backend's 404 and the gateway's 503 for a Service without endpoints are
 * answered by the error Service, asked with ingress-nginx's X- fields; interception off passes the
 * backend's own; an Ingress without the annotations is unchanged.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { annotatedIngressYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

function ingress(name: string, annotations: Record<string, string>, service: string): string {
  return annotatedIngressYaml({ name, namespace: "live", host: `${name}.live.test`, service, annotations });
}

/** A Service on port 80 with its pods' endpoint at this loopback port (none: no endpoints). */
function service(name: string, port?: number): string {
  const svc = `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: live }
spec: { ports: [{ port: 80 }] }
`;
  if (port === undefined) return svc;
  return `${svc}---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-0, namespace: live, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${port} }]
`;
}

const PAGES = { "custom-http-errors": "404,503", "default-backend": "errors" };

forEachFront("custom-http-errors and default-backend, live", (front) => {
  let app: ReturnType<typeof Bun.serve>;
  let errors: ReturnType<typeof Bun.serve>;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    // The app answers `/status/<n>` with n; the error Service with the code it is told, and what it got.
    app = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        const path = new URL(req.url).pathname;
        return Response.json(
          { from: "app" },
          { status: Number(/^\/status\/(\d{3})/.exec(path)?.[1] ?? 200) },
        );
      },
    });
    errors = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        const got = Object.fromEntries(req.headers);
        const path = new URL(req.url).pathname;
        return Response.json({ from: "errors", path, got }, { status: Number(got["x-code"] ?? 500) });
      },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-error-pages-"));
    const docs = [
      ingress("paged", PAGES, "app"),
      ingress("nopods", PAGES, "empty"),
      ingress("ownonly", { ...PAGES, "disable-proxy-intercept-errors": "true" }, "app"),
      ingress("plain", {}, "app"),
      service("app", app.port),
      service("errors", errors.port),
      service("empty"),
    ];
    await writeFile(join(dir, "live.yaml"), docs.join("---\n"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    app?.stop(true);
    errors?.stop(true);
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async (host: string, path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { host: `${host}.live.test`, accept: "text/html" },
    });
    type Body = { from: string; path?: string; got?: Record<string, string> };
    return { status: res.status, body: (await res.json()) as Body };
  };

  test("a backend's 404 is the error Service's answer, asked with the X- fields", async () => {
    const { status, body } = await get("paged", "/status/404?x=1");
    expect([status, body.from, body.path]).toEqual([404, "errors", "/"]);
    const g = body.got ?? {};
    expect([g["x-code"], g["x-format"], g["x-original-uri"], g.host]).toEqual([
      "404",
      "text/html",
      "/status/404?x=1",
      "paged.live.test",
    ]);
    expect([g["x-namespace"], g["x-ingress-name"], g["x-service-name"], g["x-service-port"]]).toEqual([
      "live",
      "paged",
      "app",
      "80",
    ]);
    expect(g["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect((await get("paged", "/fine")).body.from).toBe("app");
  });

  test("the gateway's 503 for a Service without endpoints is the error Service's answer", async () => {
    const { status, body } = await get("nopods", "/x");
    expect([status, body.from, body.got?.["x-code"], body.got?.["x-service-name"]]).toEqual([
      503,
      "errors",
      "503",
      "empty",
    ]);
  });

  test("disable-proxy-intercept-errors and an Ingress without the annotations pass the backend's 404", async () => {
    expect(await get("ownonly", "/status/404")).toEqual({ status: 404, body: { from: "app" } });
    expect(await get("plain", "/status/404")).toEqual({ status: 404, body: { from: "app" } });
  });
});
