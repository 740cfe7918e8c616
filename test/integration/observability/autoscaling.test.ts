/**
 * deploy/autoscaling/ against a live gateway serving the examples' own ScaleToZeroPolicy: every
 * `gatehouse_*` series the Prometheus adapter rules, the HPA (through the adapter's naming) and the KEDA
 * ScaledObject select exists on /metrics with the labels they select by, and selects the example's
 * backend; every query is PromQL; the adapter maps the series to the Service the HPA describes; the HPA
 * leaves 0 to the gateway (`scaler: Gateway`, minReplicas ≥ 1) and KEDA owns it (`scaler: External`,
 * minReplicaCount 0); both policies are accepted; the kustomizations list files that exist. Both fronts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parser as promql } from "@prometheus-io/lezer-promql";
import { parse, parseAllDocuments } from "yaml";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const autoscaling = join(resolve(import.meta.dir, "../../.."), "deploy", "autoscaling");

/** The examples' workload behind Service demo/fn (port 80), routed to by an Ingress. */
function fnYaml(podPort: number): string {
  return `apiVersion: v1
kind: Service
metadata: { name: fn, namespace: demo }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: fn-1, namespace: demo, labels: { kubernetes.io/service-name: fn } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1] }]
ports: [{ name: http, port: ${podPort} }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: fn, namespace: demo }
spec:
  ingressClassName: gatehouse
  rules:
    - host: fn.test
      http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: fn, port: { number: 80 } } } }] }
`;
}

// biome-ignore lint/suspicious/noExplicitAny: manifests as parsed
type Obj = Record<string, any>;

async function manifests(dir: string): Promise<Obj[]> {
  const k = parse(await readFile(join(autoscaling, dir, "kustomization.yaml"), "utf8")) as {
    resources: string[];
  };
  const out: Obj[] = [];
  for (const f of k.resources) {
    expect((await stat(join(autoscaling, dir, f))).isFile()).toBe(true);
    for (const d of parseAllDocuments(await readFile(join(autoscaling, dir, f), "utf8"))) {
      expect(d.errors).toEqual([]);
      out.push(d.toJS() as Obj);
    }
  }
  return out;
}

const ofKind = (objs: Obj[], kind: string): Obj => {
  const o = objs.find((x) => x.kind === kind);
  expect(o).toBeDefined();
  return o as Obj;
};

interface AdapterRule {
  seriesQuery: string;
  resources: { overrides: Record<string, { resource: string }> };
  name: { matches: string; as: string };
  metricsQuery: string;
}

async function adapterRules(): Promise<AdapterRule[]> {
  const text = await readFile(join(autoscaling, "hpa", "prometheus-adapter-rules.yaml"), "utf8");
  return (parse(text) as { rules: AdapterRule[] }).rules;
}

/** A scraped series: name, labels, value. */
interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

function seriesOf(scrape: string): Series[] {
  const out: Series[] = [];
  for (const m of scrape.matchAll(/^(gatehouse_[a-z0-9_]+)\{([^}]*)\} (\S+)$/gm)) {
    const labels: Record<string, string> = {};
    for (const l of (m[2] as string).matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] as string] = l[2] as string;
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** Each `gatehouse_*{…}` selector in a PromQL text: its name and its `=` / `!=` matchers. */
function selectors(expr: string): { name: string; eq: [string, string][]; ne: [string, string][] }[] {
  return [...expr.matchAll(/\b(gatehouse_[a-z0-9_]+)(?:\{([^}]*)\})?/g)].map((m) => ({
    name: m[1] as string,
    eq: [...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1] as string, l[2] as string]),
    ne: [...(m[2] ?? "").matchAll(/(\w+)!="([^"]*)"/g)].map((l) => [l[1] as string, l[2] as string]),
  }));
}

/** The series a selector picks out of a scrape. */
function matching(series: readonly Series[], sel: ReturnType<typeof selectors>[number]): Series[] {
  return series.filter(
    (s) =>
      s.name === sel.name &&
      sel.eq.every(([k, v]) => s.labels[k] === v) &&
      sel.ne.every(([k, v]) => (s.labels[k] ?? "") !== v),
  );
}

function parsesAsPromQL(expr: string): boolean {
  let ok = true;
  promql.parse(expr).iterate({
    enter: (n) => {
      if (n.type.isError) ok = false;
    },
  });
  return ok;
}

/** An adapter template with its placeholders filled in as the adapter fills them. */
function filled(template: string, series: string): string {
  return template
    .replaceAll("<<.Series>>", series)
    .replaceAll("<<.LabelMatchers>>", 'backend_namespace="demo",backend_service="fn"')
    .replaceAll("<<.GroupBy>>", "backend_service");
}

forEachFront("deploy/autoscaling", (front) => {
  let dir: string;
  let pod: EchoServer;
  let gw: RunningGateway;
  let series: Series[];
  let restoreSink: ((line: string) => void) | undefined;

  const activation = async () =>
    (await (await fetch(`http://127.0.0.1:${gw.admin.port}/debug/activation`)).json()) as Obj[];

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    pod = startEchoServer({ service: "fn", namespace: "demo" });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-autoscaling-"));
    await writeFile(join(dir, "fn.yaml"), fnYaml(pod.port));
    await writeFile(
      join(dir, "policy.yaml"),
      await readFile(join(autoscaling, "hpa", "scaletozeropolicy.yaml"), "utf8"),
    );
    let port: number;
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]));
    for (let i = 0; i < 3; i++)
      expect((await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "fn.test" } })).status).toBe(200);
    series = seriesOf(await (await fetch(`http://127.0.0.1:${gw.admin.port}/metrics`)).text());
  });

  afterAll(async () => {
    await gw?.stop();
    await pod?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restoreSink) setLogSink(restoreSink);
  });

  describe("the HPA through the Prometheus adapter", () => {
    test("each rule's series exist with the labels it maps to the Service the HPA describes", async () => {
      const rules = await adapterRules();
      const hpa = ofKind(await manifests("hpa"), "HorizontalPodAutoscaler");
      const exposed = new Map<string, Series[]>();
      for (const r of rules) {
        const [sel] = selectors(r.seriesQuery);
        expect(sel).toBeDefined();
        const found = matching(series, sel as ReturnType<typeof selectors>[number]);
        expect(found.length).toBeGreaterThan(0);
        const byName = found.map((s) => s.name.replace(new RegExp(r.name.matches), r.name.as));
        exposed.set(byName[0] as string, found);
        // The overrides name labels the series carry, mapped to the namespace and the Service.
        expect(Object.values(r.resources.overrides).map((o) => o.resource)).toEqual(["namespace", "service"]);
        for (const s of found)
          expect(Object.keys(r.resources.overrides).map((l) => s.labels[l])).toEqual(["demo", "fn"]);
        const query = filled(r.metricsQuery, sel?.name as string);
        expect(parsesAsPromQL(query)).toBe(true);
      }
      const metrics = (hpa.spec.metrics as Obj[]).map((m) => m.object);
      expect(metrics.length).toBe(2);
      for (const m of metrics) {
        expect(exposed.has(m.metric.name)).toBe(true);
        expect(m.describedObject).toEqual({ apiVersion: "v1", kind: "Service", name: "fn" });
      }
      // The request count moved: the rate the HPA reads is of a counter that counts.
      const requests = exposed.get("gatehouse_backend_requests_per_second") ?? [];
      expect(requests.map((s) => [s.labels.backend, s.value])).toEqual([["demo/fn:80", 3]]);
    });

    test("the HPA leaves 0 to the gateway: minReplicas ≥ 1 on the policy's workload, scaler Gateway", async () => {
      const objs = await manifests("hpa");
      const hpa = ofKind(objs, "HorizontalPodAutoscaler");
      const policy = ofKind(objs, "ScaleToZeroPolicy");
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
      expect(hpa.spec.scaleTargetRef.name).toBe(policy.spec.workload.name);
      expect(hpa.metadata.namespace).toBe(policy.metadata.namespace);
      expect(policy.spec.scaler).toBe("Gateway");
      expect((await activation())[0]).toMatchObject({ backend: "demo/fn:80", scaler: "Gateway" });
    });
  });

  describe("KEDA's Prometheus scaler", () => {
    test("every trigger query is PromQL selecting the example's backend on exported series", async () => {
      const so = ofKind(await manifests("keda"), "ScaledObject");
      const queries = (so.spec.triggers as Obj[]).map((t) => {
        expect(t.type).toBe("prometheus");
        return t.metadata.query as string;
      });
      expect(queries.length).toBe(2);
      const used = new Set<string>();
      for (const q of queries) {
        expect(parsesAsPromQL(q)).toBe(true);
        for (const sel of selectors(q)) {
          used.add(sel.name);
          expect(matching(series, sel).map((s) => s.labels.backend)).toEqual(["demo/fn:80"]);
        }
      }
      expect([...used].sort()).toEqual([
        "gatehouse_backend_held_requests",
        "gatehouse_backend_inflight",
        "gatehouse_backend_requests_total",
      ]);
      // The grammar does refuse a broken one.
      expect(parsesAsPromQL("sum(rate(gatehouse_backend_requests_total[2m])")).toBe(false);
    });

    test("KEDA owns 0↔1: minReplicaCount 0 with a policy that says External, accepted by the gateway", async () => {
      const objs = await manifests("keda");
      const so = ofKind(objs, "ScaledObject");
      const policy = ofKind(objs, "ScaleToZeroPolicy");
      expect(so.spec.minReplicaCount).toBe(0);
      expect(so.spec.scaleTargetRef.name).toBe(policy.spec.workload.name);
      expect(policy.spec.scaler).toBe("External");
      const applied = gw.nextApply();
      await writeFile(
        join(dir, "policy.yaml"),
        await readFile(join(autoscaling, "keda", "scaletozeropolicy.yaml"), "utf8"),
      );
      await applied;
      expect((await activation())[0]).toMatchObject({ backend: "demo/fn:80", scaler: "External" });
      expect(gw.state.problems.filter((p) => p.object.kind === "ScaleToZeroPolicy")).toEqual([]);
    });
  });
});
