/**
 * deploy/monitoring/ against a live gateway: every `gatehouse_*` metric name the Grafana dashboard and the
 * PrometheusRule use is one a running gateway (with a rate limit store, so its store metrics exist)
 * exports on /metrics; the alerts the issue asks for are there, each with a severity; the kustomization
 * lists files that exist. Run on both fronts (the metric families must not depend on the front).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parser as promql } from "@prometheus-io/lezer-promql";
import { parse, parseAllDocuments } from "yaml";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type RedisServer, startRedis } from "../../helpers/redis.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { echoServiceYaml, tlsIngressYaml } from "../tls/fixtures.ts";

const monitoring = join(resolve(import.meta.dir, "../../.."), "deploy", "monitoring");

/** A Service with no EndpointSlice, routed to: its backend has no endpoint. */
const emptyYaml = `apiVersion: v1
kind: Service
metadata: { name: empty, namespace: demo }
spec: { ports: [{ port: 80 }] }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: empty, namespace: demo }
spec:
  ingressClassName: gatehouse
  rules:
    - host: empty.test
      http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: empty, port: { number: 80 } } } }] }
`;

/** Every `gatehouse_*` name in a PromQL text. */
function metricNames(promql: string): string[] {
  return [...promql.matchAll(/\bgatehouse_[a-z0-9_]+\b/g)].map((m) => m[0]);
}

/** Names a scrape exports: each family, and for histograms its _bucket, _sum and _count series. */
function exported(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === "histogram" || type === "summary")
      for (const s of ["_bucket", "_sum", "_count"]) names.add(`${name}${s}`);
  }
  return names;
}

/** Whether Prometheus's own PromQL grammar reads `expr` without an error node. */
function parsesAsPromQL(expr: string): boolean {
  let ok = true;
  promql.parse(expr).iterate({
    enter: (n) => {
      if (n.type.isError) ok = false;
    },
  });
  return ok;
}

async function dashboardExpressions(): Promise<string[]> {
  const dash = JSON.parse(await readFile(join(monitoring, "grafana-dashboard.json"), "utf8")) as {
    panels: { targets?: { expr: string }[] }[];
    templating: { list: { query?: unknown }[] };
  };
  return [
    ...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...dash.templating.list.map((v) => (v.query as { query?: string } | undefined)?.query ?? ""),
  ];
}

interface Rule {
  alert: string;
  expr: string;
  labels: { severity?: string };
  annotations: { summary?: string };
}

async function alertRules(): Promise<Rule[]> {
  const doc = parse(await readFile(join(monitoring, "prometheusrule.yaml"), "utf8")) as {
    kind: string;
    spec: { groups: { rules: Rule[] }[] };
  };
  expect(doc.kind).toBe("PrometheusRule");
  return doc.spec.groups.flatMap((g) => g.rules);
}

forEachFront("deploy/monitoring", (front) => {
  let dir: string;
  let echo: EchoServer;
  let redis: RedisServer;
  let gw: RunningGateway;
  let scrape: string;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    redis = await startRedis();
    echo = startEchoServer({ service: "echo", namespace: "demo" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-monitoring-"));
    await writeFile(join(dir, "echo.yaml"), echoServiceYaml(echo.port));
    await writeFile(join(dir, "web.yaml"), tlsIngressYaml("web", "web.test", []));
    await writeFile(join(dir, "empty.yaml"), emptyYaml);
    let port: number;
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--redis-url", redis.url]));
    expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "web.test" } })).status).toBe(200);
    scrape = await (await fetch(`http://127.0.0.1:${gw.admin.port}/metrics`)).text();
  });

  afterAll(async () => {
    await gw?.stop();
    await echo?.stop();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  test("every metric the Grafana dashboard and the alerts use is exported by the gateway", async () => {
    const names = exported(scrape);
    const used = new Set(
      [...(await dashboardExpressions()), ...(await alertRules()).map((r) => r.expr)].flatMap(metricNames),
    );
    expect(used.size).toBeGreaterThan(20);
    const missing = [...used].filter((n) => !names.has(n));
    expect(missing).toEqual([]);
  });

  test("every expression is PromQL (Grafana's $__rate_interval read as a range)", async () => {
    const panels = (await dashboardExpressions()).filter((e) => e !== "" && !e.startsWith("label_values("));
    const rules = (await alertRules()).map((r) => r.expr);
    const bad = [...panels.map((e) => e.replaceAll("$__rate_interval", "5m")), ...rules].filter(
      (e) => !parsesAsPromQL(e),
    );
    expect(bad).toEqual([]);
    // The grammar does refuse a broken one.
    expect(parsesAsPromQL("sum by (route (rate(gatehouse_requests_total[5m]))")).toBe(false);
  });

  test("the alerts the issue asks for, each with a severity and a summary", async () => {
    const rules = await alertRules();
    const uses = (metric: string) => rules.filter((r) => metricNames(r.expr).includes(metric));
    expect(uses("gatehouse_requests_total").map((r) => r.alert)).toContain("GatehouseRouteHigh5xxRatio");
    expect(uses("gatehouse_request_duration_seconds_bucket").map((r) => r.alert)).toContain(
      "GatehouseRouteHighP99Latency",
    );
    expect(
      uses("gatehouse_tls_certificate_expiry_timestamp_seconds")
        .map((r) => r.expr)
        .join("\n"),
    ).toContain("14 * 86400");
    expect(uses("gatehouse_config_applies_total")[0]?.expr).toContain('result="failure"');
    expect(uses("gatehouse_ratelimit_degraded")).toHaveLength(1);
    expect(uses("gatehouse_backend_endpoints")[0]?.expr).toContain("== 0");
    for (const r of rules) {
      expect(["info", "warning", "critical"]).toContain(r.labels.severity as string);
      expect(r.annotations.summary?.length).toBeGreaterThan(10);
    }
  });

  test("gatehouse_backend_endpoints is 0 for a backend with no endpoint, what the alert fires on", () => {
    expect(scrape).toContain('gatehouse_backend_endpoints{backend="demo/echo:80"} 1');
    expect(scrape).toContain('gatehouse_backend_endpoints{backend="demo/empty:80"} 0');
  });

  test("the kustomization lists files that exist, and every manifest parses", async () => {
    const k = parse(await readFile(join(monitoring, "kustomization.yaml"), "utf8")) as {
      resources: string[];
      configMapGenerator: { files: string[] }[];
    };
    const files = [
      ...k.resources,
      ...k.configMapGenerator.flatMap((g) => g.files.map((f) => f.split("=").pop() as string)),
    ];
    for (const f of files) expect((await stat(join(monitoring, f))).isFile()).toBe(true);
    for (const f of k.resources) {
      const docs = parseAllDocuments(await readFile(join(monitoring, f), "utf8"));
      for (const d of docs) expect(d.errors).toEqual([]);
    }
  });
});
