/**
 * WAFPolicy on the wire (docs/waf.md), from both sources (a folder, and `--kube` against the test API
 * server) on both fronts, with the real engine and Debian's CRS: the attack set is answered 403 on an
 * HTTPRoute a WAFPolicy targets and reaches the backend on one it does not; a policy on one rule
 * (`sectionName`) guards that rule only; the policy's status says Accepted (written back to the API server
 * in `--kube`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { wafDecisions } from "../../../src/waf/decisions.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { gateway, gatewayClass, httpRoute, ns, service, slice, within } from "../../helpers/kube-fixtures.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { ATTACKS, type CaseRequest } from "./attacks.ts";

const HTTPROUTE = { group: "gateway.networking.k8s.io", kind: "HTTPRoute" };

function wafPolicy(name: string, target: Record<string, string>): Obj {
  return {
    apiVersion: "gatehouse.dev/v1alpha1",
    kind: "WAFPolicy",
    metadata: { name, namespace: ns },
    spec: { targetRefs: [{ ...HTTPROUTE, ...target }], mode: "Enforce", coreRuleSet: { paranoiaLevel: 1 } },
  };
}

/** HTTPRoute `mixed`: rule `admin` on /admin (its own WAFPolicy) and a rule for the rest (none). */
function mixedRoute(): Obj {
  const route = httpRoute("mixed", "gw", "mixed.test", "web");
  const backendRefs = [{ name: "web", port: 80 }];
  route.spec = {
    ...route.spec,
    rules: [
      { name: "admin", matches: [{ path: { type: "PathPrefix", value: "/admin" } }], backendRefs },
      { backendRefs },
    ],
  };
  return route;
}

function objects(listenerPort: number, backendPort: number): Obj[] {
  return [
    gatewayClass(),
    gateway("gw", listenerPort),
    httpRoute("guarded", "gw", "guarded.test", "web"),
    httpRoute("open", "gw", "open.test", "web"),
    mixedRoute(),
    wafPolicy("guarded", { name: "guarded" }),
    wafPolicy("admin-only", { name: "mixed", sectionName: "admin" }),
    service("web"),
    slice("web", [backendPort]),
  ];
}

const route = (name: string, rule = 0) => `httproute/${ns}/${name}/rule/${rule}/match/0`;

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

for (const source of ["folder", "kube"] as const)
  forEachFront(`WAFPolicy through the ${source} source`, (front) => {
    let gw: RunningGateway;
    let api: KubeApiServer | undefined;
    let dir: string;
    let port: number;

    beforeAll(async () => {
      port = await freePort();
      dir = await mkdtemp(join(tmpdir(), "gatehouse-waf-policy-"));
      const objs = objects(port, backend.port as number);
      let args: string[];
      if (source === "folder") {
        await writeFile(join(dir, "all.yaml"), objs.map((o) => JSON.stringify(o)).join("\n---\n"));
        args = ["--dir", dir];
      } else {
        api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
        for (const o of objs) api.create(o);
        args = ["--kube", "--kubeconfig", await api.writeKubeconfig(join(dir, "kubeconfig"))];
      }
      ({ gw } = await startTestGateway(args, ["--front", front, "--access-log-sample", "0"]));
      await within(10_000, () =>
        Boolean(
          gw.state.model?.listeners.some((l) => l.virtualHosts.some((v) => v.hostname === "guarded.test")),
        ),
      );
    });
    afterAll(async () => {
      await gw?.stop({ delayMs: 0 });
      await api?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const send = async (host: string, c: CaseRequest, prefix = "") => {
      const res = await fetch(`http://127.0.0.1:${port}${prefix}${c.target}`, {
        method: c.method,
        headers: { ...c.headers, host },
        ...(c.body !== undefined ? { body: c.body } : {}),
      });
      await res.arrayBuffer();
      return res.status;
    };

    test("the attack set: 403 on the HTTPRoute the policy targets, 200 on the one it does not", async () => {
      const blocked = wafDecisions(route("guarded"), "block");
      for (const c of ATTACKS) {
        expect({ name: c.name, status: await send("guarded.test", c) }).toEqual({
          name: c.name,
          status: 403,
        });
        expect({ name: c.name, status: await send("open.test", c) }).toEqual({ name: c.name, status: 200 });
      }
      expect(wafDecisions(route("guarded"), "block")).toBe(blocked + ATTACKS.length);
    });

    test("a policy on one rule (sectionName) guards that rule only", async () => {
      const sqli = ATTACKS[0] as CaseRequest;
      expect(await send("mixed.test", sqli, "/admin")).toBe(403);
      expect(await send("mixed.test", sqli)).toBe(200);
      expect(wafDecisions(route("mixed", 0), "block")).toBeGreaterThan(0);
    });

    test("the policies say Accepted", async () => {
      const accepted = (name: string) => {
        const status =
          source === "kube"
            ? (api as KubeApiServer).get("WAFPolicy", ns, name).status
            : gw.state.statuses.find((s) => s.target.kind === "WAFPolicy" && s.target.name === name)?.status;
        // biome-ignore lint/suspicious/noExplicitAny: a status as written
        return (status as any)?.ancestors?.[0]?.conditions?.[0];
      };
      await within(
        5_000,
        () => accepted("guarded")?.status === "True" && accepted("admin-only") !== undefined,
      );
      expect(accepted("guarded")).toMatchObject({ type: "Accepted", status: "True", reason: "Accepted" });
      expect(accepted("admin-only")).toMatchObject({ type: "Accepted", status: "True", reason: "Accepted" });
    });
  });
