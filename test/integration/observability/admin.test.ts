/**
 * Every admin endpoint over HTTP on the admin port of a gateway serving a folder with a TLS Secret, an
 * HTTPS Ingress, a Gateway and HTTPRoute, a Service whose endpoint refuses connections and a manifest
 * translation rejects; /metrics is read after traffic and must show each family the README lists. Run
 * on both fronts (the plain-HTTP traffic counted in /metrics crosses the front under test).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { gatewayClassYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { rawRequest } from "../../helpers/raw-http.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { echoServiceYaml, tlsIngressYaml, tlsSecretYaml } from "../tls/fixtures.ts";

const cert = selfSigned("secure.test");

function downServiceYaml(port: number): string {
  return `${serviceYaml("down", "demo", port)}---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: down, namespace: demo }
spec:
  ingressClassName: gatehouse
  rules:
    - host: down.test
      http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: down, port: { number: 80 } } } }] }
`;
}

function gatewayYaml(port: number): string {
  return `${gatewayClassYaml}---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: demo }
spec:
  gatewayClassName: gatehouse
  infrastructure: { labels: { team: edge }, annotations: { example.com/lb: internal } }
  listeners: [{ name: http, port: ${port}, protocol: HTTP }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web, namespace: demo }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ name: echo, port: 80 }] }]
`;
}

/** A sample's value (`labels` "" for a series without labels); NaN when the series is absent. */
function sample(text: string, name: string, labels: string): number {
  const prefix = labels === "" ? `${name} ` : `${name}{${labels}} `;
  const line = text.split("\n").find((l) => l.startsWith(prefix));
  return line === undefined ? Number.NaN : Number(line.slice(prefix.length));
}

forEachFront("a gateway serving a folder", (front) => {
  let dir: string;
  let echo: EchoServer;
  let gw: RunningGateway;
  let admin: string;
  const ports = { http: 0, https: 0, gateway: 0 };
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    echo = startEchoServer({ service: "echo", namespace: "demo" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-admin-"));
    ports.https = await freePort();
    ports.gateway = await freePort();
    await writeFile(join(dir, "echo.yaml"), echoServiceYaml(echo.port));
    await writeFile(join(dir, "down.yaml"), downServiceYaml(await freePort()));
    await writeFile(join(dir, "gateway.yaml"), gatewayYaml(ports.gateway));
    const secure = tlsIngressYaml("secure", "secure.test", [[["secure.test"], "secure"]]);
    await writeFile(join(dir, "secure.yaml"), `${tlsSecretYaml("secure", cert)}---\n${secure}`);
    // Upper-case host: translation rejects this Ingress (a problem), everything else is served.
    await writeFile(join(dir, "bad.yaml"), tlsIngressYaml("bad", "Bad.Test", []));
    ({ gw, port: ports.http } = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--https-port", String(ports.https)],
    ));
    admin = `http://127.0.0.1:${gw.admin.port}`;
  });

  afterAll(async () => {
    await gw?.stop();
    await echo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  describe("admin endpoints", () => {
    test("/healthz and /readyz", async () => {
      expect(await (await fetch(`${admin}/healthz`)).text()).toBe("ok\n");
      expect((await fetch(`${admin}/readyz`)).status).toBe(200);
    });

    test("/debug/status: the Gateway and HTTPRoute statuses as JSON, the Gateway's infrastructure record", async () => {
      const res = await fetch(`${admin}/debug/status`);
      expect(res.headers.get("content-type")).toContain("application/json");
      const statuses = (await res.json()) as {
        target: { kind: string; name: string };
        status: unknown;
        infrastructure?: unknown;
      }[];
      const gateway = statuses.find((s) => s.target.kind === "Gateway" && s.target.name === "gw");
      expect(JSON.stringify(gateway?.status)).toContain('"type":"Programmed","status":"True"');
      // What Gatehouse would put on the objects it creates for the Gateway (none in folder mode).
      expect(gateway?.infrastructure).toEqual({
        labels: {
          "app.kubernetes.io/managed-by": "gatehouse",
          "gatehouse.dev/gateway-name": "gw",
          "gatehouse.dev/gateway-namespace": "demo",
          "gateway.networking.k8s.io/gateway-name": "gw",
          team: "edge",
        },
        annotations: { "example.com/lb": "internal" },
      });
      const route = statuses.find((s) => s.target.kind === "HTTPRoute" && s.target.name === "web");
      expect(JSON.stringify(route?.status)).toContain('"type":"Accepted","status":"True"');
    });

    test("/debug/problems names the rejected Ingress", async () => {
      const problems = (await (await fetch(`${admin}/debug/problems`)).json()) as {
        object: { name: string };
      }[];
      expect(problems.some((p) => p.object.name === "bad")).toBe(true);
    });

    test("/debug/model is YAML of the routes with the Secret's private key redacted", async () => {
      const res = await fetch(`${admin}/debug/model`);
      expect(res.headers.get("content-type")).toContain("application/yaml");
      const text = await res.text();
      expect(text).toContain("secure.test");
      expect(text).toContain("BEGIN CERTIFICATE");
      expect(text).toContain("<redacted>");
      expect(text).not.toContain("PRIVATE KEY");
      // No line of the key's base64 body either.
      const keyLines = cert.keyPem.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"));
      expect(keyLines.length).toBeGreaterThan(0);
      for (const l of keyLines) expect(text).not.toContain(l);
    });
  });

  describe("/metrics after traffic", () => {
    let text: string;

    beforeAll(async () => {
      const viaGateway = `http://127.0.0.1:${ports.gateway}`;
      for (let i = 0; i < 3; i++) expect((await fetch(`${viaGateway}/x`)).status).toBe(200);
      const down = await fetch(`http://127.0.0.1:${ports.http}/`, { headers: { host: "down.test" } });
      expect(down.status).toBe(502);
      const tls = await rawRequest({
        host: "127.0.0.1",
        port: ports.https,
        target: "/",
        headers: [["Host", "secure.test"]],
        tls: { servername: "secure.test" },
      });
      expect(tls.status).toBe(200);
      text = await (await fetch(`${admin}/metrics`)).text();
    });

    test("requests and response bytes per route", () => {
      const route = 'route="httproute/demo/web/rule/0/match/0"';
      expect(sample(text, "gatehouse_requests_total", `${route},code_class="2xx"`)).toBe(3);
      expect(sample(text, "gatehouse_response_bytes_total", route)).toBeGreaterThan(100);
      expect(sample(text, "gatehouse_request_duration_seconds_count", route)).toBe(3);
    });

    test("config applies, their duration, translate problems", () => {
      expect(sample(text, "gatehouse_config_applies_total", 'result="success"')).toBeGreaterThanOrEqual(1);
      expect(sample(text, "gatehouse_config_apply_duration_seconds_count", "")).toBeGreaterThanOrEqual(1);
      expect(text).toMatch(
        /^gatehouse_translate_problems\{kind="Ingress",reason="[^"]+",severity="error"\} 1$/m,
      );
    });

    test("certificate expiry of the HTTPS listener's certificate", () => {
      const line = text
        .split("\n")
        .find(
          (l) =>
            l.startsWith("gatehouse_tls_certificate_expiry_timestamp_seconds{") && l.includes("demo/secure"),
        );
      expect(line).toBeDefined();
      const expiry = Number(line?.slice(line.lastIndexOf(" ") + 1));
      // selfSigned() certificates are valid for one day from now.
      expect(Math.abs(expiry - (Date.now() / 1000 + 86_400))).toBeLessThan(600);
    });

    test("upstream errors by backend and kind", () => {
      expect(sample(text, "gatehouse_upstream_errors_total", 'backend="demo/down:80",kind="connect"')).toBe(
        1,
      );
    });

    test("gauges and process metrics", () => {
      expect(text).toMatch(/^gatehouse_inflight_requests \d+$/m);
      expect(text).toMatch(/^gatehouse_client_connections \d+$/m);
      expect(text).toContain("gatehouse_process_resident_memory_bytes");
    });
  });
});
