// Single front: the Kubernetes source alone (informers, Secrets); no gateway and no listener is started.
/**
 * The Kubernetes source on its own (the real informers through @kubernetes/client-node) against the test
 * API server: the wait for a referenced Secret is bounded; only referenced Secrets keep their data in
 * memory; a watch event of another kind or an unknown type is ignored.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../../../src/observability/logger.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { KubeClient, loadKubeConfig } from "../../../src/sources/kubernetes/client.ts";
import { KubernetesSource } from "../../../src/sources/kubernetes/kube-source.ts";
import type { ResourceSnapshot } from "../../../src/sources/snapshot.ts";
import { translate } from "../../../src/translate/translate.ts";
import { KubeApiServer, type Obj } from "../../helpers/kube-api-server.ts";
import { ingress, ns, tlsSecret, within } from "../../helpers/kube-fixtures.ts";

let api: KubeApiServer;
let source: KubernetesSource;
let dir: string;
let restore: ((line: string) => void) | undefined;
const snapshots: { at: number; snapshot: ResourceSnapshot }[] = [];
let startMs = 0;
let firstMs = 0;

const secretNames = (s: ResourceSnapshot | undefined) =>
  (s?.secrets ?? []).map((x) => x.metadata.name).sort();
const latest = () => snapshots.at(-1)?.snapshot;
const withData = (s: ResourceSnapshot | undefined) =>
  (s?.secrets ?? [])
    .filter((x) => x.data !== undefined)
    .map((x) => x.metadata.name)
    .sort();

function tlsIngress(name: string, secretName: string): Obj {
  const obj = ingress(name, `${name}.example`, "/", "web");
  obj.spec.tls = [{ hosts: [`${name}.example`], secretName }];
  return obj;
}

beforeAll(async () => {
  restore = setLogSink(() => {});
  api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
  dir = await mkdtemp(join(tmpdir(), "gatehouse-kube-source-"));
  api.create(tlsSecret("stuck", selfSigned("stuck.example")));
  api.create(tlsSecret("fine", selfSigned("fine.example")));
  api.create(tlsSecret("unused", selfSigned("unused.example")));
  api.create(tlsIngress("stuck", "stuck"));
  api.create(tlsIngress("fine", "fine"));
  // The read of one referenced Secret hangs far longer than the source waits for it.
  api.delay((c) => c.resource === "secrets" && c.verb === "get" && c.name === "stuck", 1500);
  const client = new KubeClient(loadKubeConfig(await api.writeKubeconfig(join(dir, "kubeconfig"))));
  source = new KubernetesSource(client, (snapshot) => snapshots.push({ at: performance.now(), snapshot }), {
    debounceMs: 5,
    secretWaitMs: 400,
  });
  startMs = performance.now();
  await source.start();
  firstMs = performance.now() - startMs;
});

afterAll(async () => {
  source?.stop();
  await api?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (restore) setLogSink(restore);
});

describe("KubernetesSource", () => {
  test("the first snapshot waits for a slow Secret read only as long as the bound", async () => {
    expect(firstMs).toBeGreaterThanOrEqual(390);
    expect(firstMs).toBeLessThan(1400); // well before the read answers
    // Delivered without the Secret still being read, which is named as unreadable (translation reports
    // that Ingress), never as a Secret without data.
    expect(secretNames(snapshots[0]?.snapshot)).toEqual(["fine"]);
    expect(withData(snapshots[0]?.snapshot)).toEqual(["fine"]);
    expect(snapshots[0]?.snapshot.unreadable).toEqual([
      { kind: "Secret", namespace: ns, name: "stuck", why: "no answer in 400 ms" },
    ]);
    const first = translate(snapshots[0]?.snapshot as ResourceSnapshot).problems;
    expect(first.filter((p) => p.object.kind === "Secret")).toEqual([
      {
        object: { kind: "Secret", namespace: ns, name: "stuck" },
        reason: "UnreadableSecret",
        message:
          "referenced, but the gateway could not read it (no answer in 400 ms): what uses it reports it not found",
        severity: "error",
      },
    ]);
    const ingressProblems = first.filter((p) => p.object.name === "stuck" && p.object.kind === "Ingress");
    expect(ingressProblems.map((p) => p.message).join("\n")).toContain(`Secret ${ns}/stuck not found`);
    // When the read answers at last, its data is delivered.
    await within(3000, () => withData(latest()).includes("stuck"));
    expect(withData(latest())).toEqual(["fine", "stuck"]);
    expect(latest()?.unreadable).toBeUndefined();
  });

  test("only Secrets a listener or Ingress references keep their data in memory", async () => {
    // The informer caches every Secret, the unreferenced one as metadata only; no snapshot has it.
    expect(source.lookup("Secret", ns, "unused")?.metadata?.name).toBe("unused");
    expect(source.lookup("Secret", ns, "unused")?.data).toBeUndefined();
    expect(snapshots.some((s) => secretNames(s.snapshot).includes("unused"))).toBe(false);
    // A watch event of an unreferenced Secret carries data; it is dropped as it arrives.
    const rv = api.apply(tlsSecret("unused", selfSigned("unused2.example"))).metadata.resourceVersion;
    await within(2000, () => source.lookup("Secret", ns, "unused")?.metadata?.resourceVersion === rv);
    expect(source.lookup("Secret", ns, "unused")?.data).toBeUndefined();
    // No longer referenced: its data is dropped with the next snapshot, also from the informer's copy.
    const n = snapshots.length;
    api.remove("Ingress", ns, "fine");
    // The snapshot of the Secret event above may land first: wait for the one without the Ingress.
    await within(2000, () => snapshots.length > n && !secretNames(latest()).includes("fine"));
    expect(source.lookup("Secret", ns, "fine")?.data).toBeUndefined();
    expect(secretNames(latest())).toEqual(["stuck"]);
  });

  test("a watch event of another kind, or of an unknown type, is ignored", async () => {
    const before = snapshots.length;
    const impostor = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "stuck", namespace: ns },
    };
    api.injectWatchEvent("Ingress", "ADDED", impostor);
    api.injectWatchEvent("Ingress", "MODIFIED", {
      ...impostor,
      metadata: { ...impostor.metadata, name: "w" },
    });
    api.injectWatchEvent("Ingress", "EXPLODED", api.get("Ingress", ns, "stuck"));
    api.injectWatchEvent("Ingress", "DELETED", impostor);
    await Bun.sleep(200);
    expect(source.lookup("Ingress", ns, "stuck")?.kind).toBe("Ingress");
    expect(source.lookup("Ingress", ns, "w")).toBeUndefined();
    expect(latest()?.ingresses.map((i) => i.metadata.name)).toEqual(["stuck"]);
    // The stream still works: a real change arrives.
    api.create(tlsIngress("after", "stuck"));
    await within(2000, () => snapshots.length > before && (latest()?.ingresses.length ?? 0) === 2);
  });
});
