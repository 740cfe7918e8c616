/**
 * Never open: when libmodsecurity3 cannot be loaded (here: GATEHOUSE_WAF_LIBRARY names a file that does
 * not exist), the gateway still starts and serves its other routes, while every request on a WAF route is
 * answered 503 problem+json and none reaches the backend; the route table warning and the metric say why.
 * Also: a gateway whose routes ask for no WAF never opens the library at all.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { wafDecisions } from "../../../src/waf/decisions.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const missing = "/nonexistent/gatehouse-test/libmodsecurity.so.3";

function ingress(name: string, annotations: Record<string, string>): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
  annotations: ${JSON.stringify(annotations)}
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${name}.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }
`;
}

let echo: EchoServer;
let dir: string;
let previous: string | undefined;

beforeAll(async () => {
  previous = process.env.GATEHOUSE_WAF_LIBRARY;
  process.env.GATEHOUSE_WAF_LIBRARY = missing;
  echo = startEchoServer({ service: "web", namespace: "shop" });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-waf-missing-"));
  const waf = {
    "nginx.ingress.kubernetes.io/enable-modsecurity": "true",
    "nginx.ingress.kubernetes.io/enable-owasp-core-rules": "true",
    "gatehouse.dev/waf-mode": "Enforce",
  };
  const yaml = [ingress("waf", waf), ingress("open", {}), serviceYaml("web", "shop", echo.port)].join(
    "---\n",
  );
  await writeFile(join(dir, "all.yaml"), yaml);
});

afterAll(async () => {
  if (previous === undefined) delete process.env.GATEHOUSE_WAF_LIBRARY;
  else process.env.GATEHOUSE_WAF_LIBRARY = previous;
  await echo.stop();
  await rm(dir, { recursive: true, force: true });
});

forEachFront("a WAF route without libmodsecurity3", (front) => {
  let gw: RunningGateway;
  let port: number;
  const lines: string[] = [];
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink((line) => lines.push(line));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });
  afterAll(async () => {
    if (restore) setLogSink(restore);
    await gw.stop({ delayMs: 0 });
  });

  test("fails closed: 503 problem+json, nothing forwarded; the route beside it is served", async () => {
    const before = echo.requests;
    const unavailable = wafDecisions("ingress/shop/waf/rule/0/path/0", "unavailable");
    for (const init of [{ method: "GET" }, { method: "POST", body: "a=1" }]) {
      const res = await fetch(`http://127.0.0.1:${port}/anything?x=1`, {
        ...init,
        headers: { host: "waf.test" },
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toContain("web application firewall");
    }
    expect(echo.requests).toBe(before);
    expect(wafDecisions("ingress/shop/waf/rule/0/path/0", "unavailable")).toBe(unavailable + 2);
    const open = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "open.test" } });
    expect(open.status).toBe(200);
    await open.arrayBuffer();
    // The table says so when it is compiled, naming the route and the library that is missing.
    const warning = lines.find((l) => l.includes("route table warning") && l.includes("WAF cannot run"));
    expect(warning).toContain("ingress/shop/waf/rule/0/path/0");
    expect(warning).toContain(missing);
  });
});
