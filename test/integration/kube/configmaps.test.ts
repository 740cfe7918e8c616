// Single front: the Kubernetes source alone (informers, ConfigMaps) and translate; no listener is started.
/**
 * ConfigMaps through the Kubernetes source (the real informers through @kubernetes/client-node) against
 * the test API server: only those an Ingress's `custom-headers` names keep their data (never their
 * binaryData) and reach the snapshot; a change to one is delivered (and translates to the new headers);
 * one that becomes referenced is read (GET); one no longer referenced loses its data again. One that
 * cannot be read (its GET refused, or RBAC without ConfigMaps: an old ClusterRole) is left out and named
 * as unreadable, so the Ingress gets a problem that says so; the gateway still becomes ready.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Filter } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { KubeClient, loadKubeConfig } from "../../../src/sources/kubernetes/client.ts";
import { KubernetesSource } from "../../../src/sources/kubernetes/kube-source.ts";
import type { ResourceSnapshot } from "../../../src/sources/snapshot.ts";
import { translate } from "../../../src/translate/translate.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { ingress, ns, within } from "../../helpers/kube-fixtures.ts";

let api: KubeApiServer;
let source: KubernetesSource;
let dir: string;
let restore: ((line: string) => void) | undefined;
const snapshots: ResourceSnapshot[] = [];
const latest = () => snapshots.at(-1);

function configMap(name: string, data: Record<string, string>): Obj {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns },
    data,
    binaryData: { "blob.bin": "AAEC" },
  };
}

function headersIngress(name: string, configMapName: string): Obj {
  const obj = ingress(name, `${name}.example`, "/", "web");
  obj.metadata.annotations = { "nginx.ingress.kubernetes.io/custom-headers": `${ns}/${configMapName}` };
  return obj;
}

/** `name → data` of the snapshot's ConfigMaps. */
const delivered = (s: ResourceSnapshot | undefined) =>
  Object.fromEntries((s?.configMaps ?? []).map((c) => [c.metadata.name, c.data]));

/** The custom-headers problems of the snapshot's Ingresses, as translate reports them. */
function headerProblems(s: ResourceSnapshot | undefined): string[] {
  if (s === undefined) return [];
  const { problems } = translate(s, { allowedResponseHeaders: ["X-Frame-Options"] });
  return problems.map((p) => p.message).filter((m) => m.includes("custom-headers"));
}

/** The response headers the snapshot's Ingress `name` sets, as translate makes them. */
function headersOf(s: ResourceSnapshot | undefined, name: string): unknown {
  if (s === undefined) return undefined;
  const { model } = translate(s, { allowedResponseHeaders: ["X-Frame-Options"] });
  const route = model.listeners[0]?.virtualHosts
    .flatMap((vh) => vh.routes)
    .find((r) => r.source.name === name);
  const f = route?.filters.find((x: Filter) => x.kind === "ResponseHeaderModifier");
  return f?.kind === "ResponseHeaderModifier" ? f.edits.set : undefined;
}

beforeAll(async () => {
  restore = setLogSink(() => {});
  api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-configmaps-"));
  api.create(configMap("headers", { "X-Frame-Options": "DENY" }));
  api.create(configMap("unused", { "X-Frame-Options": "SAMEORIGIN" }));
  api.create(headersIngress("site", "headers"));
  const client = new KubeClient(loadKubeConfig(await api.writeKubeconfig(join(dir, "kubeconfig"))));
  source = new KubernetesSource(client, (snapshot) => snapshots.push(snapshot), { debounceMs: 5 });
  await source.start();
});

afterAll(async () => {
  source?.stop();
  await api?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

describe("KubernetesSource: ConfigMaps", () => {
  test("only a ConfigMap an Ingress names keeps its data (not its binaryData) and is delivered", () => {
    expect(delivered(latest())).toEqual({ headers: { "X-Frame-Options": "DENY" } });
    expect(latest()?.configMaps[0]).not.toHaveProperty("binaryData");
    expect(source.lookup("ConfigMap", ns, "unused")?.metadata?.name).toBe("unused");
    expect(source.lookup("ConfigMap", ns, "unused")?.data).toBeUndefined();
    expect(source.lookup("ConfigMap", ns, "headers")?.binaryData).toBeUndefined();
    expect(headersOf(latest(), "site")).toEqual([{ name: "x-frame-options", value: "DENY" }]);
  });

  test("a change to the ConfigMap is delivered and translates to the new header", async () => {
    api.apply(configMap("headers", { "X-Frame-Options": "SAMEORIGIN" }));
    await within(2000, () => delivered(latest()).headers?.["X-Frame-Options"] === "SAMEORIGIN");
    expect(headersOf(latest(), "site")).toEqual([{ name: "x-frame-options", value: "SAMEORIGIN" }]);
  });

  test("a ConfigMap that becomes referenced is read; one no longer referenced loses its data", async () => {
    const gets = () =>
      api.calls.filter((c) => c.resource === "configmaps" && c.verb === "get" && c.name === "unused").length;
    expect(gets()).toBe(0);
    api.create(headersIngress("other", "unused"));
    await within(2000, () => delivered(latest()).unused !== undefined);
    expect(gets()).toBe(1);
    expect(delivered(latest()).unused).toEqual({ "X-Frame-Options": "SAMEORIGIN" });
    expect(latest()?.configMaps.find((c) => c.metadata.name === "unused")).not.toHaveProperty("binaryData");
    api.remove("Ingress", ns, "site");
    await within(2000, () => delivered(latest()).headers === undefined);
    expect(source.lookup("ConfigMap", ns, "headers")?.data).toBeUndefined();
    expect(Object.keys(delivered(latest()))).toEqual(["unused"]);
  });
});

describe("KubernetesSource: ConfigMaps that cannot be read", () => {
  test("a referenced ConfigMap whose read is refused is left out and reported, then read once allowed", async () => {
    const lift = api.forbid((c) => c.resource === "configmaps" && c.verb === "get" && c.name === "locked");
    try {
      api.create(configMap("locked", { "X-Frame-Options": "DENY" }));
      // Cached without its data first, so that naming it needs a read.
      await within(2000, () => source.lookup("ConfigMap", ns, "locked") !== undefined);
      api.create(headersIngress("locked-site", "locked"));
      await within(3000, () => (latest()?.unreadable ?? []).some((u) => u.name === "locked"));
      expect(latest()?.unreadable).toEqual([
        { kind: "ConfigMap", namespace: ns, name: "locked", why: "reading it failed: HTTP 403" },
      ]);
      expect(delivered(latest()).locked).toBeUndefined();
      expect(headersOf(latest(), "locked-site")).toBeUndefined();
      expect(headerProblems(latest())).toEqual([
        `annotation nginx.ingress.kubernetes.io/custom-headers "${ns}/locked": ConfigMap ${ns}/locked could not be read: reading it failed: HTTP 403; not applied`,
      ]);
    } finally {
      lift();
    }
    // Read again after its pause (2 s): the headers are set and nothing is reported.
    await within(5000, () => delivered(latest()).locked !== undefined);
    expect(latest()?.unreadable).toBeUndefined();
    expect(headersOf(latest(), "locked-site")).toEqual([{ name: "x-frame-options", value: "DENY" }]);
  });

  test("RBAC without ConfigMaps: the gateway gets ready; an Ingress using custom-headers is told why", async () => {
    const old = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    const got: ResourceSnapshot[] = [];
    let s: KubernetesSource | undefined;
    try {
      old.forbid((c) => c.resource === "configmaps");
      old.create(configMap("headers", { "X-Frame-Options": "DENY" }));
      old.create(headersIngress("site", "headers"));
      old.create(ingress("plain", "plain.example", "/", "web"));
      const client = new KubeClient(loadKubeConfig(await old.writeKubeconfig(join(dir, "kubeconfig-old"))));
      s = new KubernetesSource(client, (snapshot) => got.push(snapshot), { debounceMs: 5 });
      await Promise.race([s.start(), Bun.sleep(5000).then(() => Promise.reject(new Error("never synced")))]);
      expect(s.synced).toBe(true);
      expect(
        got
          .at(-1)
          ?.ingresses.map((i) => i.metadata.name)
          .sort(),
      ).toEqual(["plain", "site"]);
      expect(got.at(-1)?.configMaps).toEqual([]);
      expect(headerProblems(got.at(-1))).toEqual([
        `annotation nginx.ingress.kubernetes.io/custom-headers "${ns}/headers": ConfigMap ${ns}/headers could not be read: the gateway is not allowed to list ConfigMaps (its ClusterRole lacks configmaps list and watch); not applied`,
      ]);
    } finally {
      s?.stop();
      await old.stop();
    }
  });

  test("RBAC from before BackendTrafficPolicy: the gateway gets ready, its Services served unchecked", async () => {
    const old = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    let s: KubernetesSource | undefined;
    try {
      old.forbid((c) => c.resource === "backendtrafficpolicies");
      old.create(ingress("plain", "plain.example", "/", "web"));
      const got: ResourceSnapshot[] = [];
      const client = new KubeClient(loadKubeConfig(await old.writeKubeconfig(join(dir, "kubeconfig-btp"))));
      s = new KubernetesSource(client, (snapshot) => got.push(snapshot), { debounceMs: 5 });
      await Promise.race([s.start(), Bun.sleep(5000).then(() => Promise.reject(new Error("never synced")))]);
      expect(s.synced).toBe(true);
      expect(got.at(-1)?.ingresses.map((i) => i.metadata.name)).toEqual(["plain"]);
      expect(got.at(-1)?.backendTrafficPolicies).toEqual([]);
    } finally {
      s?.stop();
      await old.stop();
    }
  });

  test("another kind the gateway may not list still keeps it from getting ready", async () => {
    const old = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    let s: KubernetesSource | undefined;
    try {
      old.forbid((c) => c.resource === "services");
      const client = new KubeClient(loadKubeConfig(await old.writeKubeconfig(join(dir, "kubeconfig-svc"))));
      s = new KubernetesSource(client, () => {}, { debounceMs: 5 });
      void s.start();
      await within(2000, () => old.calls.some((c) => c.resource === "configmaps" && c.verb === "watch"));
      await Bun.sleep(300);
      expect(s.synced).toBe(false);
    } finally {
      s?.stop();
      await old.stop();
    }
  });
});
