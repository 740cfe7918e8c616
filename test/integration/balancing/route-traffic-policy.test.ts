/**
 * BackendTrafficPolicies on a Gateway and on HTTPRoutes, live on both fronts, from a folder. One Service
 * `echo` (one pod answering 8 KiB of text) behind four HTTPRoutes on Gateway `gw`:
 * - the Gateway's policy compresses with gzip, for every route attached to it;
 * - route `br`'s own policy sets compression to Brotli: its override wins there, and only there;
 * - route `shut`'s own policy sets `circuitBreaker.maxParallelRequests: 0`: every request of that route is
 *   refused (503, overloaded), the other routes to the same Service are not;
 * - route `capped`'s policy sets only a (generous) circuitBreaker: compression, a field group it leaves
 *   unset, is still the Gateway's gzip;
 * - route `plain` has no policy of its own: the Gateway's gzip.
 * The Service's own policy (passive health checking) holds on every route, and the routes' variants of
 * the backend share one health state with the Service port's backend (one entry in /debug/health).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningGateway, startGateway } from "../../../src/cli/serve.ts";
import { parseServeConfig } from "../../../src/config/config.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { gatewayClassYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";

const BODY = "gatehouse route policy ".repeat(360);

function route(name: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: rtp }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [${name}.test]
  rules: [{ backendRefs: [{ name: echo, port: 80 }] }]
`;
}

function policy(name: string, created: string, target: string, spec: Record<string, unknown>): string {
  return `apiVersion: gatehouse.dev/v1alpha1
kind: BackendTrafficPolicy
metadata: { name: ${name}, namespace: rtp, creationTimestamp: "${created}" }
spec: ${JSON.stringify({ targetRefs: [JSON.parse(target)], ...spec })}
`;
}

const toRoute = (name: string) => `{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"${name}"}`;

function manifests(port: number, podPort: number): string {
  return [
    gatewayClassYaml,
    `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: rtp }
spec:
  gatewayClassName: gatehouse
  listeners: [{ name: http, port: ${port}, protocol: HTTP }]
`,
    ...["br", "shut", "capped", "plain"].map(route),
    serviceYaml("echo", "rtp", podPort),
    policy(
      "on-gateway",
      "2026-01-01T00:00:00Z",
      `{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}`,
      {
        compression: [{ type: "Gzip" }],
      },
    ),
    policy("on-echo", "2026-01-01T00:00:00Z", `{"group":"","kind":"Service","name":"echo"}`, {
      healthCheck: { passive: { consecutive5XxErrors: 3 } },
    }),
    policy("on-br", "2026-01-02T00:00:00Z", toRoute("br"), { compression: [{ type: "Brotli" }] }),
    policy("on-shut", "2026-01-02T00:00:00Z", toRoute("shut"), {
      circuitBreaker: { maxParallelRequests: 0 },
    }),
    policy("on-capped", "2026-01-02T00:00:00Z", toRoute("capped"), {
      circuitBreaker: { maxParallelRequests: 1000 },
    }),
  ].join("---\n");
}

forEachFront("BackendTrafficPolicy on a Gateway and on HTTPRoutes, live", (front) => {
  let dir: string | undefined;
  let pod: ReturnType<typeof Bun.serve> | undefined;
  let gw: RunningGateway | undefined;
  let port = 0;
  let hits = 0;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    pod = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch() {
        hits++;
        return new Response(BODY, { headers: { "content-type": "text/plain" } });
      },
    });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-route-btp-"));
    port = await freePort();
    await writeFile(join(dir, "routes.yaml"), manifests(port, pod.port as number));
    const args = ["--dir", dir, "--bind", "127.0.0.1", "--admin-port", "0", "--debounce-ms", "0"];
    args.push("--http-port", String(await freePort()), "--https-port", String(await freePort()));
    args.push("--front", front);
    gw = await startGateway(
      parseServeConfig(args, { GATEHOUSE_LOG_LEVEL: "error", GATEHOUSE_ACCESS_LOG_SAMPLE: "0" }),
    );
  });

  afterAll(async () => {
    await gw?.stop({ timeoutMs: 1000 });
    pod?.stop(true);
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function get(host: string) {
    const res = await fetch(`http://127.0.0.1:${port}/`, {
      headers: { host, "accept-encoding": "gzip, br" },
      decompress: false,
    });
    const body = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, encoding: res.headers.get("content-encoding"), res, body };
  }

  test("every policy is Accepted on its target", () => {
    const statuses = gw?.state.statuses.filter((s) => s.target.kind === "BackendTrafficPolicy") ?? [];
    expect(statuses.map((s) => s.target.name).sort()).toEqual([
      "on-br",
      "on-capped",
      "on-echo",
      "on-gateway",
      "on-shut",
    ]);
    for (const s of statuses) {
      const a = (s.status as { ancestors: { conditions: { reason: string }[] }[] }).ancestors;
      expect(a.map((x) => x.conditions[0]?.reason)).toEqual(["Accepted"]);
    }
  });

  test("the Gateway's compression on a route without a policy of its own", async () => {
    const r = await get("plain.test");
    expect(r.status).toBe(200);
    expect(r.encoding).toBe("gzip");
    expect(new TextDecoder().decode(Bun.gunzipSync(r.body))).toBe(BODY);
  });

  test("a route's own compression wins over the Gateway's, on that route only", async () => {
    const r = await get("br.test");
    expect(r.status).toBe(200);
    expect(r.encoding).toBe("br");
    expect((await get("plain.test")).encoding).toBe("gzip");
  });

  test("a route's circuit breaker refuses that route only; the same Service serves the others", async () => {
    const before = hits;
    const shut = await get("shut.test");
    expect(shut.status).toBe(503);
    expect(shut.res.headers.get("x-gatehouse-overloaded")).toBe("true");
    expect(hits).toBe(before);
    // The route's breaker leaves compression to the Gateway's policy (another field group).
    expect((await get("shut.test")).encoding).toBeNull();
    const capped = await get("capped.test");
    expect(capped.status).toBe(200);
    expect(capped.encoding).toBe("gzip");
    expect(hits).toBe(before + 1);
  });

  test("the Service's health checking holds on every route, as one state", async () => {
    const all = (await (await fetch(`http://127.0.0.1:${gw?.admin.port}/debug/health`)).json()) as {
      backend: string;
    }[];
    expect(all.map((d) => d.backend)).toEqual(["rtp/echo:80"]);
    const model = gw?.state.model;
    const variants = Object.values(model?.backends ?? {}).filter((b) => b.id.includes("/policy/"));
    expect(variants.length).toBe(4);
    for (const v of variants) expect(v.healthCheck?.source.name).toBe("on-echo");
  });
});
