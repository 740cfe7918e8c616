/**
 * Status written back by `gatehouse serve --kube` for what translation never sees, and under contention:
 * objects that fail validation are left out, listed in `/debug/problems`, and, where the kind has a
 * status we own (Gateway, HTTPRoute, our policies), get a condition saying why; a status patch that
 * meets a concurrent status update (a real 409 from the API server) is re-read and written again. Run on
 * both fronts: a fixed route is checked by a request to the Gateway's HTTP listener.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import type { Problem } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import {
  gateway,
  gatewayClass,
  httpRoute,
  ingress,
  ns,
  probe,
  service,
  slice,
  within,
} from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

forEachFront("status for invalid objects and under conflict", (front) => {
  let api: KubeApiServer;
  let web: EchoServer;
  let gw: RunningGateway;
  let dir: string;
  let listenerPort: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    web = startEchoServer({ service: "web", namespace: ns });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-status-"));
    listenerPort = await freePort();
    api.create(service("web"));
    api.create(slice("web", [web.port]));
    api.create(gatewayClass());
    api.create(gateway("gw", listenerPort));
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
    ({ gw } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      ["--front", front, "--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
    ));
  });

  afterAll(async () => {
    await gw?.stop();
    await api?.stop();
    await web?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  // biome-ignore lint/suspicious/noExplicitAny: a condition as the API returned it
  const condition = (conditions: Obj[] | undefined, type: string): any =>
    conditions?.find((c) => c.type === type);
  const problems = async (): Promise<Problem[]> =>
    (await fetch(`http://127.0.0.1:${gw.admin.port}/debug/problems`)).json() as Promise<Problem[]>;

  test("an invalid Gateway, HTTPRoute, AuthPolicy and Ingress: problems, and conditions where a status exists", async () => {
    const route = httpRoute("bad-route", "gw", "bad.test", "web");
    route.spec.rules = "every request"; // not a list
    api.create(route);
    const badGw = gateway("bad-gw", listenerPort);
    badGw.spec.listeners[0].port = "eighty";
    api.create(badGw);
    api.create({
      apiVersion: "gatehouse.dev/v1alpha1",
      kind: "AuthPolicy",
      metadata: { name: "bad-policy", namespace: ns },
      spec: {
        targetRefs: [
          { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" },
          { group: "gateway.networking.k8s.io", kind: "HTTPRoute" }, // no name
        ],
      },
    });
    const ing = ingress("bad-ing", "bad-ing.test", "/", "web");
    ing.spec.rules[0].http.paths[0].pathtype = "Prefix";
    api.create(ing);

    await within(5000, () => condition(api.get("Gateway", ns, "bad-gw").status?.conditions, "Accepted"));
    const gwAccepted = condition(api.get("Gateway", ns, "bad-gw").status.conditions, "Accepted");
    expect(gwAccepted).toMatchObject({ status: "False", reason: "Invalid", observedGeneration: 1 });
    expect(gwAccepted.message).toContain("spec.listeners[0].port");

    await within(5000, () => api.get("HTTPRoute", ns, "bad-route").status?.parents?.length === 1);
    const parent = api.get("HTTPRoute", ns, "bad-route").status.parents[0];
    expect(parent.parentRef).toEqual({ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" });
    expect(parent.controllerName).toBe("gatehouse.dev/gateway-controller");
    expect(condition(parent.conditions, "Accepted")).toMatchObject({
      status: "False",
      reason: "UnsupportedValue",
    });
    expect(condition(parent.conditions, "Accepted").message).toContain("spec.rules");

    await within(5000, () => api.get("AuthPolicy", ns, "bad-policy").status?.ancestors?.length === 1);
    const ancestor = api.get("AuthPolicy", ns, "bad-policy").status.ancestors[0];
    expect(ancestor.ancestorRef).toEqual({
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      namespace: ns,
      name: "gw",
    });
    expect(condition(ancestor.conditions, "Accepted")).toMatchObject({ status: "False", reason: "Invalid" });

    const listed = (await problems()).filter((p) => p.reason === "InvalidObject");
    expect(listed.map((p) => `${p.object.kind} ${p.object.namespace}/${p.object.name}`).sort()).toEqual([
      `AuthPolicy ${ns}/bad-policy`,
      `Gateway ${ns}/bad-gw`,
      `HTTPRoute ${ns}/bad-route`,
      `Ingress ${ns}/bad-ing`,
    ]);
    expect(listed.find((p) => p.object.kind === "Ingress")?.message).toContain("pathtype");

    // Fixed: served and Accepted True; the problem is gone.
    api.apply(httpRoute("bad-route", "gw", "bad.test", "web"));
    await within(5000, async () => (await probe(listenerPort, "bad.test")).service === "web");
    await within(5000, () => {
      const p = api.get("HTTPRoute", ns, "bad-route").status?.parents?.[0];
      return condition(p?.conditions, "Accepted")?.status === "True";
    });
    expect((await problems()).some((p) => p.object.name === "bad-route")).toBe(false);
  });

  test("a concurrent status update between read and patch: 409, re-read, written again", async () => {
    // Our patches of this route are answered only after 300 ms; meanwhile another controller writes.
    const slow = api.delay((c) => c.verb === "patch" && c.name === "contested", 300);
    const firstPatch = () => api.calls.findIndex((c) => c.verb === "patch" && c.name === "contested");
    api.create(httpRoute("contested", "gw", "contested.test", "web"));
    await within(5000, () => firstPatch() >= 0);
    const current = api.get("HTTPRoute", ns, "contested");
    const foreign = {
      parentRef: { name: "elsewhere" },
      controllerName: "example.com/other",
      conditions: [
        {
          type: "Accepted",
          status: "True",
          reason: "Accepted",
          message: "",
          lastTransitionTime: "2020-01-01T00:00:00Z",
        },
      ],
    };
    api.store.update(
      api.resource("HTTPRoute"),
      ns,
      "contested",
      { ...current, status: { parents: [foreign] } },
      "status",
    );
    await within(5000, () => api.get("HTTPRoute", ns, "contested").status?.parents?.length === 2);
    slow();
    const parents = api.get("HTTPRoute", ns, "contested").status.parents;
    expect(parents[0]).toEqual(foreign); // the other controller's entry survived the retry
    expect(parents[1].controllerName).toBe("gatehouse.dev/gateway-controller");
    const after = api.calls.slice(firstPatch()).filter((c) => c.name === "contested");
    // patch (409) → get (fresh copy) → patch (200)
    expect(after.map((c) => c.verb).slice(0, 3)).toEqual(["patch", "get", "patch"]);
  });
});
