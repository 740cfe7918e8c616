/**
 * An AuthPolicy whose JWKS cannot be fetched says so in its status (Degraded=True, KeysUnavailable),
 * while one whose keys load says Degraded=False; the first one's routes fail closed (401). Run on both
 * fronts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { setLogSink } from "../../../src/observability/logger.ts";
import type { Condition } from "../../../src/status/types.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway, type TestGateway } from "../../helpers/test-gateway.ts";

function ingress(name: string): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: default }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${name}.test
      http:
        paths: [{ path: /, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }]
---
`;
}

function policy(name: string, uri: string): string {
  return `apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: ${name} }]
  jwt:
    providers:
      - { name: p, issuer: https://id.example.com, audiences: [web], keys: { type: RemoteJWKS, uri: "${uri}" } }
---
`;
}

forEachFront("AuthPolicy key status", (front) => {
  let dir: string;
  let echo: EchoServer;
  let jwks: ReturnType<typeof Bun.serve>;
  let gw: TestGateway | undefined;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    echo = startEchoServer({ service: "web" });
    const { publicKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    jwks = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ keys: [jwk] }) });
    const nobody = await freePort(); // nothing listens there
    dir = await mkdtemp(join(tmpdir(), "gatehouse-keys-"));
    await writeFile(
      join(dir, "all.yaml"),
      ingress("up") +
        ingress("down") +
        policy("up", `http://127.0.0.1:${jwks.port}/jwks`) +
        policy("down", `http://127.0.0.1:${nobody}/jwks`) +
        `apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-1, namespace: default, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1] }]
ports: [{ port: ${echo.port} }]
`,
    );
    gw = await startTestGateway(["--dir", dir], ["--front", front, "--access-log-sample", "0"]);
  });

  afterAll(async () => {
    await gw?.gw.stop();
    jwks?.stop(true);
    await echo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  function degraded(name: string): Condition | undefined {
    const s = gw?.gw.state.statuses.find((x) => x.target.kind === "AuthPolicy" && x.target.name === name);
    const ancestors = (s?.status.ancestors ?? []) as { conditions?: Condition[] }[];
    return ancestors[0]?.conditions?.find((c) => c.type === "Degraded");
  }

  test("a policy whose keys cannot be fetched is Degraded; one whose keys load is not", async () => {
    const deadline = Date.now() + 8000;
    while (
      (degraded("down")?.status !== "True" || degraded("up")?.status !== "False") &&
      Date.now() < deadline
    )
      await Bun.sleep(50);
    expect(degraded("down")).toMatchObject({ status: "True", reason: "KeysUnavailable" });
    expect(degraded("down")?.message).toContain("/jwks");
    expect(degraded("up")).toMatchObject({ status: "False", reason: "KeysAvailable" });
    const res = await fetch(`http://127.0.0.1:${gw?.port}/`, {
      headers: { host: "down.test", authorization: "Bearer a.b.c" },
    });
    expect(res.status).toBe(401);
  }, 15_000);
});
