/**
 * Basic-auth users and API keys from a served folder, rotated without a restart: the real gateway
 * (folder source, translate, enforcer, both fronts) serves an Ingress with `auth-type: basic` and one
 * with an API-key AuthPolicy; the Secrets are rewritten, and the old password and key stop working while
 * the new ones start, with no restart.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`;

function ingress(name: string, annotations: Record<string, string>): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: rot, annotations: ${JSON.stringify(annotations)} }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${name}.rot.test
      http:
        paths: [{ path: /, pathType: Prefix, backend: { service: { name: app, port: { number: 80 } } } }]
`;
}

function manifests(upstreamPort: number, htpasswd: string, key: string): string {
  return [
    ingress("staff", {
      "nginx.ingress.kubernetes.io/auth-type": "basic",
      "nginx.ingress.kubernetes.io/auth-secret": "users",
    }),
    ingress("api", {}),
    `apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: keys, namespace: rot }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: api }]
  apiKeyAuth: { credentialRefs: [{ name: keys }] }
`,
    `apiVersion: v1\nkind: Secret\nmetadata: { name: users, namespace: rot }\nstringData: { auth: ${JSON.stringify(htpasswd)} }\n`,
    `apiVersion: v1\nkind: Secret\nmetadata: { name: keys, namespace: rot }\nstringData: { partner: ${JSON.stringify(key)} }\n`,
    `apiVersion: v1
kind: Service
metadata: { name: app, namespace: rot }
spec: { ports: [{ name: http, port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: rot, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${upstreamPort} }]
`,
  ].join("---\n");
}

// `openssl passwd -apr1 -salt abcdefgh secret`, then `{SHA}` of "password".
const before = "alice:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/\n";
const after = "alice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n";

forEachFront("credentials rotate without a restart", (front) => {
  let upstream: TestUpstream;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    upstream = startUpstream("app");
    dir = await mkdtemp(join(tmpdir(), "gatehouse-credentials-"));
    await writeFile(join(dir, "all.yaml"), manifests(upstream.port, before, "key-one"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });

  afterAll(async () => {
    await gw?.stop();
    await upstream?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const status = async (host: string, headers: Record<string, string>) => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host, ...headers } });
    await res.arrayBuffer();
    return res.status;
  };

  /** Polls until `check` holds (the folder source debounces and re-translates on change). */
  const eventually = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 100 && !(await check()); i++) await Bun.sleep(50);
    expect(await check()).toBe(true);
  };

  test("the new password and key get in, the old ones no longer do", async () => {
    expect(await status("staff.rot.test", { authorization: basic("alice", "secret") })).toBe(200);
    expect(await status("staff.rot.test", { authorization: basic("alice", "password") })).toBe(401);
    expect(await status("api.rot.test", { "x-api-key": "key-one" })).toBe(200);
    await writeFile(join(dir, "all.yaml"), manifests(upstream.port, after, "key-two"));
    await eventually(
      async () => (await status("staff.rot.test", { authorization: basic("alice", "password") })) === 200,
    );
    expect(await status("staff.rot.test", { authorization: basic("alice", "secret") })).toBe(401);
    await eventually(async () => (await status("api.rot.test", { "x-api-key": "key-two" })) === 200);
    expect(await status("api.rot.test", { "x-api-key": "key-one" })).toBe(401);
    expect(upstream.requests.at(-1)?.headers["x-api-key-name"]).toBe("partner");
  });
});
