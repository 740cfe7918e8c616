/**
 * Gateways in a cluster (`--gateway-port-offset`, `--gateway-services`) against the test API server: a
 * Gateway's listener port P is served on P + offset, redirects keep P; the leader creates one Service per
 * Gateway beside the fleet's Service (same selector, P → P + offset), updates it when the listeners
 * change, takes the Gateway's address from it, and deletes it with the Gateway; every call is granted
 * by deploy/'s RBAC. Run on both fronts: the Gateway's HTTP listener serves plain HTTP.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { clusterPermissions, leasePermissions } from "../../../src/sources/kubernetes/permissions.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { ApiError, KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { gatewayClass, httpRoute, ns, probe, service, slice, within } from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const fleetNs = "gatehouse-system";
const listenerPort = 8081;
const managed = "gatehouse-gw-demo-edge";

function edge(ports: readonly number[]): Obj {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "edge", namespace: ns },
    spec: {
      gatewayClassName: "gatehouse",
      listeners: ports.map((port) => ({ name: `l${port}`, port, protocol: "HTTP" })),
    },
  };
}

forEachFront("one Service per Gateway, listener ports on internal ports", (front) => {
  let api: KubeApiServer;
  let web: EchoServer;
  let gw: RunningGateway;
  let dir: string;
  let internal: number;
  let restore: ((line: string) => void) | undefined;

  const managedService = (): Obj | undefined => {
    try {
      return api.get("Service", fleetNs, managed);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  };

  beforeAll(async () => {
    restore = setLogSink(() => {});
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    web = startEchoServer({ service: "web", namespace: ns });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-gwsvc-"));
    internal = await freePort();
    api.create(service("web"));
    api.create(slice("web", [web.port]));
    api.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "gatehouse", namespace: fleetNs },
      spec: {
        type: "LoadBalancer",
        selector: { "app.kubernetes.io/name": "gatehouse" },
        ports: [{ port: 80 }],
      },
    });
    api.create(gatewayClass());
    api.create(edge([listenerPort]));
    api.create(httpRoute("edge", "edge", "edge.test", "web"));
    const moved = httpRoute("moved", "edge", "edge.test", "web");
    moved.spec.rules = [
      {
        matches: [{ path: { type: "PathPrefix", value: "/old" } }],
        filters: [
          {
            type: "RequestRedirect",
            requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: "/new" } },
          },
        ],
      },
    ];
    api.create(moved);
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
    ({ gw } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      [
        "--front",
        front,
        ...["--gateway-port-offset", String(internal - listenerPort), "--gateway-services", "LoadBalancer"],
        ...["--publish-service", `${fleetNs}/gatehouse`, "--leader-election-namespace", fleetNs],
        ...["--lease-duration-ms", "2000"],
      ],
    ));
  });

  afterAll(async () => {
    await gw?.stop();
    await api?.stop();
    await web?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  test("a Gateway gets its Service: listener port → internal port, the fleet's selector", async () => {
    await within(5000, () => managedService() !== undefined);
    const svc = managedService() as Obj;
    expect(svc.spec.type).toBe("LoadBalancer");
    expect(svc.spec.selector).toEqual({ "app.kubernetes.io/name": "gatehouse" });
    expect(svc.spec.ports).toEqual([
      { name: "p8081", protocol: "TCP", port: listenerPort, targetPort: internal },
    ]);
    expect(svc.metadata.labels).toMatchObject({
      "app.kubernetes.io/managed-by": "gatehouse",
      "gatehouse.dev/gateway-namespace": ns,
      "gatehouse.dev/gateway-name": "edge",
    });
  });

  test("traffic to the internal port routes; a redirect names the listener's real port", async () => {
    expect(await probe(internal, "edge.test")).toEqual({ status: 200, service: "web" });
    const res = await fetch(`http://127.0.0.1:${internal}/old`, {
      headers: { host: `edge.test:${listenerPort}` },
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`http://edge.test:${listenerPort}/new`);
  });

  test("the Gateway's address is its Service's load-balancer address", async () => {
    const svc = managedService() as Obj;
    api.store.update(
      api.resource("Service"),
      fleetNs,
      managed,
      { ...svc, status: { loadBalancer: { ingress: [{ ip: "198.51.100.77" }] } } },
      "status",
    );
    await within(
      5000,
      () => api.get("Gateway", ns, "edge").status?.addresses?.[0]?.value === "198.51.100.77",
    );
    expect(api.get("Gateway", ns, "edge").status.addresses).toEqual([
      { type: "IPAddress", value: "198.51.100.77" },
    ]);
  });

  test("spec.infrastructure labels and annotations go onto the Service; dropped ones leave it", async () => {
    const withInfra = (annotations: Record<string, string>) => {
      const g = edge([listenerPort]);
      g.spec.infrastructure = {
        labels: { team: "edge", "gatehouse.dev/gateway-name": "spoof" },
        annotations,
      };
      return g;
    };
    api.apply(withInfra({ "example.com/lb": "internal", "example.com/tier": "gold" }));
    await within(5000, () => managedService()?.metadata.annotations?.["example.com/tier"] === "gold");
    // The spoofed label of ours is refused with a warning; /debug/status shows what the Service carries.
    const problem = gw.state.problems.find(
      (p) => p.object.kind === "Gateway" && p.message.includes('labels["gatehouse.dev/gateway-name"]'),
    );
    expect(problem?.severity).toBe("warning");
    const record = gw.state.statuses.find(
      (s) => s.target.kind === "Gateway" && s.target.name === "edge",
    )?.infrastructure;
    expect(managedService()?.metadata.labels).toEqual(record?.labels);
    expect(record?.annotations).toEqual({ "example.com/lb": "internal", "example.com/tier": "gold" });
    // Someone else's annotation on the Service is left alone.
    const svc = managedService() as Obj;
    svc.metadata.annotations["other.example/note"] = "keep";
    api.apply(svc);
    api.apply(withInfra({ "example.com/lb": "external" }));
    await within(5000, () => managedService()?.metadata.annotations?.["example.com/lb"] === "external");
    const after = managedService() as Obj;
    expect(after.metadata.annotations["example.com/tier"]).toBeUndefined();
    expect(after.metadata.annotations["other.example/note"]).toBe("keep");
    expect(after.metadata.labels).toMatchObject({ team: "edge", "gatehouse.dev/gateway-name": "edge" });
    api.apply(edge([listenerPort]));
    await within(5000, () => managedService()?.metadata.labels?.team === undefined);
    expect(managedService()?.metadata.annotations?.["example.com/lb"]).toBeUndefined();
  });

  test("listeners changed → the Service's ports follow; Gateway deleted → Service gone", async () => {
    // A free internal port whose listener port (internal − offset) is a valid port number.
    let extra = (await freePort()) - (internal - listenerPort);
    for (let i = 0; i < 200 && (extra < 1 || extra > 65535 || extra === listenerPort); i++)
      extra = (await freePort()) - (internal - listenerPort);
    api.apply(edge([listenerPort, extra]));
    await within(5000, () => (managedService()?.spec.ports ?? []).length === 2);
    // Ports are listed in port order, so find the new one by its number.
    const ports = (managedService()?.spec.ports ?? []) as Record<string, unknown>[];
    expect(ports.find((p) => p.port === extra)).toEqual({
      name: `p${extra}`,
      protocol: "TCP",
      port: extra,
      targetPort: extra + internal - listenerPort,
    });
    api.remove("Gateway", ns, "edge");
    await within(5000, () => managedService() === undefined);
    expect(api.get("Service", fleetNs, "gatehouse").metadata.name).toBe("gatehouse"); // the fleet's stays
  });

  test("every call made is granted by deploy/'s RBAC", () => {
    const key = (p: { group: string; resource: string; verb: string }) =>
      `${p.group}|${p.resource}|${p.verb}`;
    const granted = new Set([...clusterPermissions(), ...leasePermissions()].map(key));
    const used = new Set(
      api.calls.map((c) => `${c.group}|${c.resource}${c.subresource ? `/${c.subresource}` : ""}|${c.verb}`),
    );
    for (const verb of ["create", "update", "delete"]) expect(used).toContain(`|services|${verb}`);
    for (const u of used) expect(granted).toContain(u);
  });
});
