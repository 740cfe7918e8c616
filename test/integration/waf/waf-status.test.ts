/**
 * A WAF that cannot run is said where its owner looks, not only in the log: a WAFPolicy whose engine is
 * missing (GATEHOUSE_WAF_LIBRARY names a file that does not exist) or whose rule set the worker refuses
 * (GATEHOUSE_WAF_CRS_DIR names no rules) gets `Degraded: True` beside `Accepted`, at /debug/status and, in
 * `--kube`, on the object; an Ingress's WAF annotations, which have no status, are a problem at
 * /debug/problems. A healthy policy says `Degraded: False`, and a worker that stops shows until its
 * restart has the rule set loaded again. Both sources, both fronts; the routes answer 503 meanwhile.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import type { Problem } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import type { Condition } from "../../../src/status/types.ts";
import { engineQueue } from "../../../src/waf/engine-queue.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import {
  gateway,
  gatewayClass,
  httpRoute,
  ingress,
  ns,
  service,
  slice,
  within,
} from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const missingLibrary = "/nonexistent/gatehouse-test/libmodsecurity.so.3";
const missingRules = "/nonexistent/gatehouse-test/crs";

function objects(listenerPort: number, backendPort: number): Obj[] {
  const annotated = ingress("annotated", "annotated.test", "/", "web");
  annotated.metadata = {
    ...annotated.metadata,
    annotations: {
      "nginx.ingress.kubernetes.io/enable-modsecurity": "true",
      "nginx.ingress.kubernetes.io/enable-owasp-core-rules": "true",
    },
  };
  return [
    gatewayClass(),
    gateway("gw", listenerPort),
    httpRoute("guarded", "gw", "guarded.test", "web"),
    {
      apiVersion: "gatehouse.dev/v1alpha1",
      kind: "WAFPolicy",
      metadata: { name: "guarded", namespace: ns },
      spec: {
        targetRefs: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", name: "guarded" }],
        mode: "Enforce",
      },
    },
    annotated,
    service("web"),
    slice("web", [backendPort]),
  ];
}

let backend: ReturnType<typeof Bun.serve>;
let restore: ((line: string) => void) | undefined;

beforeAll(() => {
  restore = setLogSink(() => {});
  backend = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("backend") });
});
afterAll(() => {
  backend.stop(true);
  if (restore) setLogSink(restore);
});

/** A gateway on `objects`, from a folder or the test API server, with `env` set while it runs. */
function gatewayFor(source: "folder" | "kube", front: string, env: Record<string, string>) {
  /** `port`: the Gateway's listener; `ingressPort`: where Ingresses are served. */
  const g = {} as { gw: RunningGateway; port: number; ingressPort: number; api: KubeApiServer | undefined };
  let dir: string;
  const previous = new Map<string, string | undefined>();
  beforeAll(async () => {
    for (const [k, v] of Object.entries(env)) {
      previous.set(k, process.env[k]);
      process.env[k] = v;
    }
    g.port = await freePort();
    dir = await mkdtemp(join(tmpdir(), "gatehouse-waf-status-"));
    const objs = objects(g.port, backend.port as number);
    let args: string[];
    g.api = undefined;
    if (source === "folder") {
      await writeFile(join(dir, "all.yaml"), objs.map((o) => JSON.stringify(o)).join("\n---\n"));
      args = ["--dir", dir];
    } else {
      g.api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
      for (const o of objs) g.api.create(o);
      args = ["--kube", "--kubeconfig", await g.api.writeKubeconfig(join(dir, "kubeconfig"))];
    }
    ({ gw: g.gw, port: g.ingressPort } = await startTestGateway(args, [
      "--front",
      front,
      "--access-log-sample",
      "0",
    ]));
    await within(10_000, () =>
      Boolean(
        g.gw.state.model?.listeners.some((l) => l.virtualHosts.some((v) => v.hostname === "guarded.test")),
      ),
    );
  });
  afterAll(async () => {
    await g.gw?.stop({ delayMs: 0 });
    await g.api?.stop();
    for (const [k, v] of previous)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  /** The policy's conditions: /debug/status, or (in --kube) the status written to the API server. */
  const conditions = (): Condition[] => {
    const status =
      g.api !== undefined
        ? g.api.get("WAFPolicy", ns, "guarded").status
        : g.gw.state.statuses.find((s) => s.target.kind === "WAFPolicy" && s.target.name === "guarded")
            ?.status;
    // biome-ignore lint/suspicious/noExplicitAny: a status as written
    return (status as any)?.ancestors?.[0]?.conditions ?? [];
  };
  const degraded = () => conditions().find((c) => c.type === "Degraded");
  const problem = (kind: string, name: string): Problem | undefined =>
    g.gw.state.problems.find(
      (p) => p.object.kind === kind && p.object.name === name && p.reason.startsWith("WAF"),
    );
  const status = async (host: string) => {
    const port = host === "guarded.test" ? g.port : g.ingressPort;
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host } });
    await res.arrayBuffer();
    return res.status;
  };
  return { g, conditions, degraded, problem, status };
}

const failures = [
  {
    what: "libmodsecurity3 missing",
    env: { GATEHOUSE_WAF_LIBRARY: missingLibrary },
    reason: "EngineUnavailable",
    problem: "WAFEngineUnavailable",
    says: missingLibrary,
  },
  {
    what: "a rule set the worker refuses",
    env: { GATEHOUSE_WAF_CRS_DIR: missingRules },
    reason: "RuleSetFailed",
    problem: "WAFRuleSetFailed",
    says: "the rule set did not load",
  },
] as const;

for (const source of ["folder", "kube"] as const)
  for (const f of failures)
    forEachFront(`WAF status with ${f.what}, ${source} source`, (front) => {
      const { degraded, conditions, problem, status } = gatewayFor(source, front, f.env);

      test("the WAFPolicy stays Accepted and says Degraded, the Ingress is a problem; 503s", async () => {
        // A worker of the suite before may still be ending (EngineUnavailable meanwhile): wait for the reason.
        await within(10_000, () => degraded()?.reason === f.reason);
        expect(conditions()[0]).toMatchObject({ type: "Accepted", status: "True" });
        expect(degraded()).toMatchObject({ type: "Degraded", status: "True", reason: f.reason });
        expect(degraded()?.message).toContain(f.says);
        expect(degraded()?.message).toContain("503");
        expect(problem("Ingress", "annotated")).toMatchObject({ reason: f.problem, severity: "error" });
        expect(problem("Ingress", "annotated")?.message).toContain(f.says);
        expect(problem("WAFPolicy", "guarded")?.reason).toBe(f.problem);
        expect(await status("guarded.test")).toBe(503);
        expect(await status("annotated.test")).toBe(503);
      });
    });

forEachFront("WAF status of a healthy engine, and of a worker that stops", (front) => {
  const { degraded, problem, status } = gatewayFor("folder", front, {});

  test("Degraded False once loaded; True while the worker is down; False again after its restart", async () => {
    await within(10_000, () => degraded()?.status === "False");
    expect(degraded()).toMatchObject({ reason: "EngineReady" });
    expect(problem("Ingress", "annotated")).toBeUndefined();
    expect(await status("guarded.test")).toBe(200);
    engineQueue.crash("kill");
    await within(5_000, () => degraded()?.status === "True");
    expect(degraded()).toMatchObject({ reason: "EngineUnavailable" });
    expect(degraded()?.message).toContain("WAF worker stopped");
    expect(problem("Ingress", "annotated")?.reason).toBe("WAFEngineUnavailable");
    await within(15_000, () => degraded()?.status === "False");
    expect(degraded()).toMatchObject({ reason: "EngineReady" });
    expect(problem("Ingress", "annotated")).toBeUndefined();
    expect(await status("guarded.test")).toBe(200);
  });
});
