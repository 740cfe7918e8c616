// Single front: manifests and the API calls a gateway makes (list/watch, Leases, status); no request reaches a listener.
/**
 * deploy/ as a user applies it: every manifest parses; the ClusterRole and the leader-election Role
 * grant exactly what the code declares it uses (src/sources/kubernetes/permissions.ts) — no more, no
 * less; and every call a running gateway made against the test API server is covered by them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { setLogSink } from "../../../src/observability/logger.ts";
import {
  clusterPermissions,
  leasePermissions,
  type Permission,
} from "../../../src/sources/kubernetes/permissions.ts";
import { KubeApiServer } from "../../helpers/kube-api-server.ts";
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

const deployDir = join(resolve(import.meta.dir, "../../.."), "deploy");
// biome-ignore lint/suspicious/noExplicitAny: manifests are arbitrary YAML
type Doc = Record<string, any>;

async function manifests(): Promise<{ file: string; doc: Doc }[]> {
  const out: { file: string; doc: Doc }[] = [];
  for (const file of (await readdir(deployDir)).filter((f) => f.endsWith(".yaml")).sort()) {
    for (const d of parseAllDocuments(await readFile(join(deployDir, file), "utf8"))) {
      expect(d.errors).toEqual([]);
      if (d.contents !== null) out.push({ file, doc: d.toJS() as Doc });
    }
  }
  return out;
}

/** `group|resource|verb` for every grant of a Role/ClusterRole (no wildcards allowed). */
function grants(role: Doc): Set<string> {
  const out = new Set<string>();
  for (const rule of role.rules ?? []) {
    for (const g of rule.apiGroups)
      for (const r of rule.resources)
        for (const v of rule.verbs) {
          expect([g, r, v]).not.toContain("*");
          out.add(`${g}|${r}|${v}`);
        }
  }
  return out;
}

const key = (p: Permission) => `${p.group}|${p.resource}|${p.verb}`;
const restore = setLogSink(() => {});
afterAll(() => setLogSink(restore));

describe("deploy/", () => {
  test("every manifest parses and names itself; the kustomization lists every file", async () => {
    const all = await manifests();
    const files = new Set(all.map((m) => m.file));
    for (const { doc } of all) {
      if (doc.kind === "Kustomization") continue;
      expect(typeof doc.apiVersion).toBe("string");
      expect(typeof doc.metadata?.name).toBe("string");
    }
    const kustomization = all.find((m) => m.doc.kind === "Kustomization")?.doc;
    expect(new Set(kustomization?.resources)).toEqual(
      new Set([...files].filter((f) => f !== "kustomization.yaml")),
    );
  });

  test("the Deployment: 2 replicas, probes, non-root with a read-only root filesystem", async () => {
    const all = await manifests();
    const dep = all.find((m) => m.doc.kind === "Deployment" && m.doc.metadata.name === "gatehouse")
      ?.doc as Doc;
    expect(dep.spec.replicas).toBe(2);
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    expect(c.livenessProbe.httpGet.path).toBe("/healthz");
    expect(c.readinessProbe.httpGet.path).toBe("/readyz");
    expect(c.resources.requests.cpu).toBeDefined();
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(pod.serviceAccountName).toBe("gatehouse");
    expect(c.args).toContain("--kube");
    const kinds = new Set(all.map((m) => m.doc.kind));
    for (const k of [
      "Namespace",
      "ServiceAccount",
      "ClusterRoleBinding",
      "Service",
      "HorizontalPodAutoscaler",
      "PodDisruptionBudget",
      "IngressClass",
      "GatewayClass",
    ]) {
      expect(kinds).toContain(k);
    }
  });

  test("the ClusterRole and the Role grant exactly the permissions the code declares", async () => {
    const all = await manifests();
    const clusterRole = all.find((m) => m.doc.kind === "ClusterRole")?.doc as Doc;
    const role = all.find((m) => m.doc.kind === "Role")?.doc as Doc;
    expect(grants(clusterRole)).toEqual(new Set(clusterPermissions().map(key)));
    expect(grants(role)).toEqual(new Set(leasePermissions().map(key)));
    const bindings = all.filter((m) => m.doc.kind.endsWith("Binding")).map((m) => m.doc);
    for (const b of bindings)
      expect(b.subjects).toEqual([
        { kind: "ServiceAccount", name: "gatehouse", namespace: "gatehouse-system" },
      ]);
  });

  test("every call a running gateway makes is granted", async () => {
    const api = await KubeApiServer.start({ bookmarkIntervalMs: 100 });
    const dir = await mkdtemp(join(tmpdir(), "gatehouse-rbac-"));
    try {
      api.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "cert", namespace: ns },
        type: "kubernetes.io/tls",
        data: { "tls.crt": "", "tls.key": "" },
      });
      api.create(service("web"));
      api.create(slice("web", [1]));
      api.create(gatewayClass());
      api.create(gateway("gw", await freePort()));
      api.create(httpRoute("r", "gw", "r.test", "web"));
      const kubeconfig = await api.writeKubeconfig(join(dir, "kc"));
      const { gw } = await startTestGateway(
        ["--kube", "--kubeconfig", kubeconfig],
        ["--lease-duration-ms", "1000", "--leader-election-namespace", "gatehouse-system"],
      );
      try {
        // A newly referenced Secret is read (get secrets); status is written (patch */status).
        const ing = ingress("tls", "tls.test", "/", "web");
        ing.spec.tls = [{ hosts: ["tls.test"], secretName: "cert" }];
        api.create(ing);
        await within(5000, () => api.calls.some((c) => c.verb === "get" && c.resource === "secrets"));
        await within(5000, () => api.get("HTTPRoute", ns, "r").status?.parents?.length === 1);
      } finally {
        await gw.stop();
      }
      const granted = new Set([...clusterPermissions(), ...leasePermissions()].map(key));
      const used = new Set(
        api.calls.map((c) => `${c.group}|${c.resource}${c.subresource ? `/${c.subresource}` : ""}|${c.verb}`),
      );
      for (const u of used) expect(granted).toContain(u);
      for (const needed of [
        "|secrets|get",
        "coordination.k8s.io|leases|create",
        "coordination.k8s.io|leases|update",
        "gateway.networking.k8s.io|httproutes/status|patch",
      ]) {
        expect(used).toContain(needed);
      }
    } finally {
      await api.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
