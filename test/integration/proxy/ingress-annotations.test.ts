/**
 * Never open, on the wire: an Ingress asking for access controls Gatehouse does not enforce
 * (`modsecurity-snippet`, `auth-proxy-set-headers`) answers 403 with a problem+json body to an
 * anonymous client at 127.0.0.1, on every path and on both fronts, and its backend sees nothing; an
 * Ingress beside it is served. `--allow-unenforced-annotations` serves it open, as the operator asked.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const guarded: Record<string, string> = {
  "nginx.ingress.kubernetes.io/modsecurity-snippet": "SecRuleEngine On",
  "nginx.ingress.kubernetes.io/auth-proxy-set-headers": "shop/auth-headers",
};

function manifests(port: number): string {
  const ingress = (
    name: string,
    host: string,
    annotations: Record<string, string>,
  ) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
  annotations: ${JSON.stringify(annotations)}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${host}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
  return [
    ingress("guarded", "guarded.test", guarded),
    ingress("open", "open.test", {}),
    serviceYaml("web", "shop", port),
  ].join("---\n");
}

forEachFront("an Ingress with access controls Gatehouse does not enforce", (front) => {
  let echo: EchoServer;
  let dir: string;
  const gateways: RunningGateway[] = [];
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    // The error about the Ingress is expected; a log level flag would change the whole process's level.
    restore = setLogSink(() => {});
    echo = startEchoServer({ service: "web", namespace: "shop" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-annotations-"));
    await writeFile(join(dir, "all.yaml"), manifests(echo.port));
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop({ delayMs: 0 })));
    await echo.stop();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function start(...extra: string[]): Promise<number> {
    const { gw, port } = await startTestGateway(["--dir", dir], ["--front", front, ...extra]);
    gateways.push(gw);
    return port;
  }

  const get = (port: number, host: string, path = "/") =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers: { host } });

  test("answers 403 problem+json on every path, never the backend; the Ingress beside it is served", async () => {
    const port = await start();
    const before = echo.requests;
    for (const path of ["/", "/admin", "/a/b?c=d"]) {
      const res = await get(port, "guarded.test", path);
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      const body = (await res.json()) as { status: number; detail: string };
      expect(body.status).toBe(403);
      expect(body.detail).toContain("nginx.ingress.kubernetes.io/modsecurity-snippet");
      expect(body.detail).toContain("nginx.ingress.kubernetes.io/auth-proxy-set-headers");
    }
    expect(echo.requests).toBe(before);
    const open = await get(port, "open.test");
    expect(open.status).toBe(200);
    await open.arrayBuffer();
    expect(echo.requests).toBe(before + 1);
  });

  test("--allow-unenforced-annotations serves it open, as the operator asked", async () => {
    const port = await start("--allow-unenforced-annotations");
    const res = await get(port, "guarded.test");
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });
});
