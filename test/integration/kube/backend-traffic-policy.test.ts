/**
 * BackendTrafficPolicy through `gatehouse serve --kube` (the real informers, translate, the status writer
 * and the data plane) against the test API server, on both fronts: the policy on Service `web` (two pods)
 * is written back Accepted on its Service ancestor, a pod answering 503 is ejected after 2 of them and
 * the other takes every request; the policy changed to ask for a TCP active health check is written back
 * Invalid, naming the field, and no longer applies (the failing pod takes its share again).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { ingress, ns, service, slice, within } from "../../helpers/kube-fixtures.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

function pod(name: string) {
  const p = { failWith: 0, server: undefined as ReturnType<typeof Bun.serve> | undefined };
  p.server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => Response.json({ pod: name }, { status: p.failWith || 200 }),
  });
  return p;
}

const policy = (healthCheck: Obj): Obj => ({
  apiVersion: "gatehouse.dev/v1alpha1",
  kind: "BackendTrafficPolicy",
  metadata: { name: "web", namespace: ns },
  spec: { targetRefs: [{ group: "", kind: "Service", name: "web" }], healthCheck },
});

forEachFront("BackendTrafficPolicy through the Kubernetes source", (front) => {
  let api: KubeApiServer;
  let a: ReturnType<typeof pod>;
  let b: ReturnType<typeof pod>;
  let gw: RunningGateway;
  let port: number;
  let dir: string;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    a = pod("a");
    b = pod("b");
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-traffic-policy-"));
    api.create(service("web"));
    api.create(slice("web", [a.server?.port as number], [], "web-a"));
    api.create(slice("web", [b.server?.port as number], [], "web-b"));
    api.create(ingress("web", "web.test", "/", "web"));
    api.create(policy({ passive: { consecutive5XxErrors: 2, baseEjectionTime: "30s" } }));
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
    ({ gw, port } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      [
        ...["--front", front, "--access-log-sample", "0"],
        ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
      ],
    ));
  });

  afterAll(async () => {
    await gw?.stop();
    await api?.stop();
    a?.server?.stop(true);
    b?.server?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host: "web.test" } });
    return { status: res.status, pod: ((await res.json().catch(() => ({}))) as { pod?: string }).pod };
  };
  // biome-ignore lint/suspicious/noExplicitAny: a status as the API returned it
  const accepted = (): any =>
    api
      .get("BackendTrafficPolicy", ns, "web")
      .status?.ancestors?.[0]?.conditions?.find((c: Obj) => c.type === "Accepted");

  test("written back Accepted on the Service; a failing pod is ejected and the other takes everything", async () => {
    await within(5000, () => accepted() !== undefined);
    expect(accepted()).toMatchObject({ status: "True", reason: "Accepted", observedGeneration: 1 });
    expect(api.get("BackendTrafficPolicy", ns, "web").status.ancestors[0].ancestorRef).toEqual({
      group: "",
      kind: "Service",
      namespace: ns,
      name: "web",
    });
    await within(5000, async () => (await get()).status === 200);
    b.failWith = 503;
    const pods: (string | undefined)[] = [];
    for (let i = 0; i < 20; i++) pods.push((await get()).pod);
    // Round robin over two: b's second 503 in a row comes within its first four requests; then only a.
    expect(pods.slice(0, 4).filter((p) => p === "b")).toHaveLength(2);
    expect(pods.slice(4)).toEqual(new Array(16).fill("a"));
  });

  test("asking for a TCP active health check: written back Invalid, naming the field, and not applied", async () => {
    api.apply(policy({ active: { type: "TCP", tcp: {} }, passive: {} }));
    await within(5000, () => accepted()?.status === "False");
    expect(accepted()).toMatchObject({ reason: "Invalid", observedGeneration: 2 });
    expect(accepted().message).toContain("spec.healthCheck.active");
    // No policy, no ejection: the failing pod is back in the rotation (a new table, no detector).
    await within(5000, async () => (await get()).pod === "b");
  });
});
