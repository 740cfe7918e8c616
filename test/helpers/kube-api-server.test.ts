/** The test API server, checked through the real @kubernetes/client-node (what the gateway uses). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  CoordinationV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from "@kubernetes/client-node";
import { KubeClient } from "../../src/sources/kubernetes/client.ts";
import { KubeApiServer, parseSelector } from "./kube-api-server.ts";

let api: KubeApiServer;
let kc: KubeConfig;
let client: KubeClient;

beforeAll(async () => {
  api = await KubeApiServer.start({ bookmarkIntervalMs: 50, historyLimit: 5 });
  kc = new KubeConfig();
  kc.loadFromString(api.kubeconfig());
  client = new KubeClient(kc);
});
afterAll(() => api.stop());

const gw = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name, namespace: "t", labels },
  spec: { gatewayClassName: "x", listeners: [] },
});
const path = "/apis/gateway.networking.k8s.io/v1/namespaces/t/gateways";

/** Collect watch events until `n` arrived or the stream ended. */
async function watchEvents(query: Record<string, string | boolean>, n: number, during?: () => void) {
  const events: { type: string; object: Record<string, unknown> }[] = [];
  let controller: AbortController | undefined;
  const ended = new Promise<unknown>((resolve) => {
    void new Watch(kc)
      .watch(
        path,
        query,
        (type, object) => {
          events.push({ type, object });
          if (events.length >= n) controller?.abort();
        },
        resolve,
      )
      .then((c) => {
        controller = c;
      });
  });
  await Bun.sleep(30);
  during?.();
  await Promise.race([ended, Bun.sleep(2000)]);
  controller?.abort();
  return events;
}

describe("KubeApiServer", () => {
  test("create, list with resourceVersion, get, 409 AlreadyExists, 404 NotFound", async () => {
    const created = await client.request("POST", path, { body: gw("a", { app: "x" }) });
    expect(created.status).toBe(201);
    expect((await client.request("POST", path, { body: gw("a") })).status).toBe(409);
    expect((await client.get(`${path}/missing`)).status).toBe(404);
    const list = (await client.get(`${path}?labelSelector=app%3Dx`)).body as {
      metadata: { resourceVersion: string };
      items: unknown[];
    };
    expect(list.items.length).toBe(1);
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  test("update: stale resourceVersion → 409; spec change bumps generation; status subresource only touches status", async () => {
    const cur = (await client.get(`${path}/a`)).body as {
      metadata: { resourceVersion: string; generation: number };
    };
    const next = {
      ...gw("a"),
      metadata: { ...cur.metadata },
      spec: { gatewayClassName: "y", listeners: [] },
      status: { ignored: true },
    };
    const put = await client.request("PUT", `${path}/a`, { body: next });
    expect(put.status).toBe(200);
    const after = put.body as { metadata: { generation: number }; status?: unknown };
    expect(after.metadata.generation).toBe(cur.metadata.generation + 1);
    expect(after.status).toBeUndefined();
    expect((await client.request("PUT", `${path}/a`, { body: next })).status).toBe(409);
    const st = await client.request("PATCH", `${path}/a/status`, {
      body: { status: { conditions: [] }, spec: { gatewayClassName: "z" } },
      contentType: "application/merge-patch+json",
    });
    const patched = st.body as {
      spec: { gatewayClassName: string };
      metadata: { generation: number };
      status: unknown;
    };
    expect(patched.spec.gatewayClassName).toBe("y");
    expect(patched.status).toEqual({ conditions: [] });
    expect(patched.metadata.generation).toBe(after.metadata.generation);
    const jp = await client.request("PATCH", `${path}/a`, {
      body: [{ op: "replace", path: "/spec/gatewayClassName", value: "w" }],
      contentType: "application/json-patch+json",
    });
    expect((jp.body as { spec: { gatewayClassName: string } }).spec.gatewayClassName).toBe("w");
    const stale = await client.request("PATCH", `${path}/a/status`, {
      body: { metadata: { resourceVersion: "1" }, status: {} },
      contentType: "application/merge-patch+json",
    });
    expect(stale.status).toBe(409);
  });

  test("watch: replay from a resourceVersion, live events, bookmarks; an old one gets an ERROR 410 event", async () => {
    const rv = String(api.store.rv);
    const events = await watchEvents({ resourceVersion: rv, allowWatchBookmarks: true }, 4, () => {
      api.create(gw("b"));
      api.remove("Gateway", "t", "b");
    });
    expect(
      events
        .map((e) => e.type)
        .filter((t) => t !== "BOOKMARK")
        .slice(0, 2),
    ).toEqual(["ADDED", "DELETED"]);
    expect(events.some((e) => e.type === "BOOKMARK")).toBe(true);
    for (let i = 0; i < 6; i++) api.apply(gw("c", { i: String(i) })); // pushes rv out of the history
    const gone = await watchEvents({ resourceVersion: rv }, 1);
    expect(gone[0]?.type).toBe("ERROR");
    expect(gone[0]?.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
  });

  test("leases through the typed client; merge patch via client-node's PatchStrategy", async () => {
    const leases = kc.makeApiClient(CoordinationV1Api);
    const lease = await leases.createNamespacedLease({
      namespace: "t",
      body: { metadata: { name: "l" }, spec: { holderIdentity: "me", leaseDurationSeconds: 2 } },
    });
    expect(lease.spec?.holderIdentity).toBe("me");
    const patched = await leases.patchNamespacedLease(
      { name: "l", namespace: "t", body: { spec: { holderIdentity: "you" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect(patched.spec?.holderIdentity).toBe("you");
    expect(patched.spec?.leaseDurationSeconds).toBe(2);
  });

  test("label selectors", () => {
    expect(parseSelector("a=1,b!=2")({ a: "1", b: "3" })).toBe(true);
    expect(parseSelector("a==1")({ a: "2" })).toBe(false);
    expect(parseSelector("!a")({})).toBe(true);
    expect(parseSelector("a")({})).toBe(false);
  });
});
