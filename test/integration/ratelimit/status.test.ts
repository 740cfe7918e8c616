/**
 * The degraded state reaches the RateLimitPolicy object in the cluster: `serve --kube --redis-url` against
 * the test API server (real @kubernetes/client-node, leader election, status writer) and a real
 * redis-server. With Redis up the policy's ancestor says `Degraded False`; Redis killed → failure mode
 * Closed answers 503 and the written status turns `Degraded True` without any change to the objects;
 * Redis back → requests are admitted again. Run on both fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { type LogLevel, setLogLevel } from "../../../src/observability/logger.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { KubeApiServer } from "../../helpers/kube-api-server.ts";
import { ingress, ns, probe, service, slice, within } from "../../helpers/kube-fixtures.ts";
import { type RedisServer, startRedis } from "../../helpers/redis.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

forEachFront("RateLimitPolicy status through the API server", (front) => {
  let api: KubeApiServer | undefined;
  let redis: RedisServer | undefined;
  let web: EchoServer | undefined;
  let gw: RunningGateway | undefined;
  let port = 0;
  let dir: string | undefined;

  beforeAll(async () => {
    api = await KubeApiServer.start({ bookmarkIntervalMs: 200 });
    redis = await startRedis();
    web = startEchoServer({ service: "web", namespace: ns });
    dir = await mkdtemp(join(tmpdir(), "gatehouse-rl-kube-"));
    const kubeconfig = await api.writeKubeconfig(join(dir, "kubeconfig"));
    api.create(service("web"));
    api.create(slice("web", [web.port]));
    api.create(ingress("web", "web.test", "/", "web"));
    api.create({
      apiVersion: "gatehouse.dev/v1alpha1",
      kind: "RateLimitPolicy",
      metadata: { name: "web", namespace: ns },
      spec: {
        targetRefs: [{ group: "networking.k8s.io", kind: "Ingress", name: "web" }],
        failureMode: "closed",
        rules: [{ limit: 1000, window: "10s" }],
      },
    });
    ({ gw, port } = await startTestGateway(
      ["--kube", "--kubeconfig", kubeconfig],
      [
        ...["--front", front],
        ...["--leader-election-namespace", "gatehouse-system", "--lease-duration-ms", "2000"],
        ...["--redis-url", redis.url, "--redis-timeout-ms", "50", "--log-level", "error"],
      ],
    ));
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    setLogLevel((process.env.GATEHOUSE_LOG_LEVEL as LogLevel | undefined) ?? "info");
    await api?.stop();
    await redis?.close();
    await web?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function degraded(): string | undefined {
    const status = api?.get("RateLimitPolicy", ns, "web").status as
      | { ancestors?: { conditions?: { type: string; status: string }[] }[] }
      | undefined;
    return status?.ancestors?.[0]?.conditions?.find((c) => c.type === "Degraded")?.status;
  }

  test("Redis down shows as Degraded on the written RateLimitPolicy status; back, requests pass", async () => {
    const r = redis as RedisServer;
    await within(10_000, () => degraded() === "False");
    expect((await probe(port, "web.test")).status).toBe(200);

    await r.stop();
    expect((await probe(port, "web.test")).status).toBe(503); // failure mode Closed
    await within(5_000, () => degraded() === "True");

    await r.start();
    await within(5_000, async () => (await probe(port, "web.test")).status === 200);
  }, 30_000);
});
