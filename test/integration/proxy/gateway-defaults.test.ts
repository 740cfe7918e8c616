/**
 * The gateway's own defaults, live on both fronts from a folder:
 * - `--error-pages-configmap`: the gateway's own 404 (no host, no path), 502 (no one listening), 503 (no
 *   endpoints) and 504 (upstream timeout) carry the ConfigMap's body for the code, with its key's
 *   Content-Type and a byte-exact Content-Length (a UTF-8 body); a code without a key keeps plain text,
 *   and a backend's own 404 passes as it came.
 * - `--default-backend-service`: a request for no Ingress host, or a host's unmatched path, goes to that
 *   Service as it came; matched paths are unchanged; an Ingress's `custom-http-errors` without
 *   `default-backend` asks that Service (with X-Code), as ingress-nginx asks its global default backend.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const NS = "defaults";
const quiet = (front: string) => ["--front", front, "--access-log-sample", "0"];

function ingress(
  name: string,
  service: string,
  path = "/",
  annotations: Record<string, string> = {},
): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: ${NS}, annotations: ${JSON.stringify(annotations)} }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${name}.test
      http:
        paths:
          - { path: ${path}, pathType: Prefix, backend: { service: { name: ${service}, port: { number: 80 } } } }
`;
}

/** A Service on port 80 with one endpoint at this loopback port (none: no endpoints). */
function service(name: string, port?: number): string {
  const svc = `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${NS} }
spec: { ports: [{ port: 80 }] }
`;
  if (port === undefined) return svc;
  return `${svc}---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-0, namespace: ${NS}, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${port} }]
`;
}

const PAGE_404 = "<h1>Nothing here — désolé</h1>\n";
const CONFIG_MAP = `apiVersion: v1
kind: ConfigMap
metadata: { name: errors, namespace: ${NS} }
data:
  404.html: ${JSON.stringify(PAGE_404)}
  502.json: '{"error":"bad gateway"}'
  503.json: '{"error":"unavailable"}'
  504.txt: "too slow\\n"
  not-a-code.html: "never sent"
`;

function startApp(name: string) {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/hang") await Bun.sleep(2000);
      const status = Number(/^\/status\/(\d{3})/.exec(url.pathname)?.[1] ?? 200);
      const code = req.headers.get("x-code");
      const seen = { from: name, path: url.pathname, host: req.headers.get("host") };
      return Response.json(code === null ? seen : { ...seen, code }, { status });
    },
  });
}

forEachFront("gateway defaults: error bodies and default backend, live", (front) => {
  let app: ReturnType<typeof Bun.serve>;
  let fallback: ReturnType<typeof Bun.serve>;
  let dir: string;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    app = startApp("app");
    fallback = startApp("fallback");
    dir = await mkdtemp(join(tmpdir(), "gatehouse-defaults-"));
    const docs = [
      ingress("app", "app"),
      ingress("narrow", "app", "/only"),
      ingress("nopods", "empty"),
      ingress("down", "closed"),
      ingress("paged", "empty", "/", { "nginx.ingress.kubernetes.io/custom-http-errors": "503" }),
      service("app", app.port),
      service("fallback", fallback.port),
      service("empty"),
      service("closed", await freePort()),
      CONFIG_MAP,
    ];
    await writeFile(join(dir, "defaults.yaml"), docs.join("---\n"));
  });

  afterAll(async () => {
    app?.stop(true);
    fallback?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const raw = async (port: number, host: string, path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { host } });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return {
      status: res.status,
      type: res.headers.get("content-type"),
      length: Number(res.headers.get("content-length") ?? -1),
      bytes: bytes.length,
      text: new TextDecoder().decode(bytes),
    };
  };

  describe("--error-pages-configmap", () => {
    let gw: RunningGateway;
    let port: number;
    beforeAll(async () => {
      const flags = [
        ...quiet(front),
        "--error-pages-configmap",
        `${NS}/errors`,
        "--upstream-timeout-ms",
        "300",
      ];
      ({ gw, port } = await startTestGateway(["--dir", dir], flags));
    });
    afterAll(async () => {
      await gw?.stop({ delayMs: 0 });
    });

    test("the gateway's 404 (unknown host, unmatched path) is the ConfigMap's HTML, its length in bytes", async () => {
      for (const [host, path] of [
        ["nowhere.test", "/"],
        ["narrow.test", "/elsewhere"],
      ] as const) {
        const r = await raw(port, host, path);
        expect([r.status, r.type, r.text]).toEqual([404, "text/html; charset=utf-8", PAGE_404]);
        expect(r.length).toBe(Buffer.byteLength(PAGE_404));
      }
    });

    test("502, 503 and 504 made by the gateway carry their keys' bodies and types", async () => {
      const bad = await raw(port, "down.test", "/");
      expect([bad.status, bad.type, bad.text]).toEqual([502, "application/json", '{"error":"bad gateway"}']);
      const none = await raw(port, "nopods.test", "/");
      expect([none.status, none.type, none.text]).toEqual([
        503,
        "application/json",
        '{"error":"unavailable"}',
      ]);
      const slow = await raw(port, "app.test", "/hang");
      expect([slow.status, slow.type, slow.text]).toEqual([504, "text/plain; charset=utf-8", "too slow\n"]);
    });

    test("a backend's own 404 passes as it came; routed requests are unchanged", async () => {
      const own = await raw(port, "app.test", "/status/404");
      expect(own.status).toBe(404);
      expect(own.type).toStartWith("application/json;");
      expect(JSON.parse(own.text).from).toBe("app");
      expect((await raw(port, "app.test", "/x")).status).toBe(200);
    });
  });

  describe("--default-backend-service", () => {
    let gw: RunningGateway;
    let port: number;
    beforeAll(async () => {
      const flags = [...quiet(front), "--default-backend-service", `${NS}/fallback`];
      ({ gw, port } = await startTestGateway(["--dir", dir], flags));
    });
    afterAll(async () => {
      await gw?.stop({ delayMs: 0 });
    });

    test("an unknown host and a host's unmatched path go to the Service, as they came", async () => {
      const far = await raw(port, "nowhere.test", "/a/b?q=1");
      expect(far.status).toBe(200);
      expect(JSON.parse(far.text)).toEqual({ from: "fallback", path: "/a/b", host: "nowhere.test" });
      const off = await raw(port, "narrow.test", "/elsewhere");
      expect(JSON.parse(off.text)).toEqual({ from: "fallback", path: "/elsewhere", host: "narrow.test" });
      expect((await raw(port, "fallback.test", "/status/418")).status).toBe(418);
    });

    test("custom-http-errors without default-backend asks the Service, as ingress-nginx asks its global one", async () => {
      const r = await raw(port, "paged.test", "/deep?x=1");
      expect(JSON.parse(r.text)).toEqual({ from: "fallback", path: "/", host: "paged.test", code: "503" });
    });

    test("matched paths keep their own backend", async () => {
      expect(JSON.parse((await raw(port, "narrow.test", "/only/x")).text).from).toBe("app");
      expect(JSON.parse((await raw(port, "app.test", "/")).text).from).toBe("app");
    });
  });
});
