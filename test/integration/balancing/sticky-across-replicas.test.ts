/**
 * Sticky sessions across two real `gatehouse serve` processes (two replicas: the same routes and
 * endpoints, each on its own listener port, sharing `--session-key-file`), on both fronts. A client
 * pinned by the first replica is sent to the same endpoint by the second: with the plain endpoint-hash
 * token (no timeouts, nothing signed) and with a timed token (idleTimeout/absoluteTimeout: HMAC-signed
 * timestamps, verified by the other replica's copy of the key). A forged timed token and an expired one
 * count as absent: balanced anew (both endpoints take such requests) and reissued, never an error.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { type GatewayProcess, startGatewayProcess } from "../../helpers/gateway-process.ts";
import { freePort } from "../../helpers/ports.ts";

function folderYaml(listenerPort: number, echoes: readonly EchoServer[]): string {
  const slices = echoes.map(
    (e, i) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: web-${i}, namespace: sticky, labels: { kubernetes.io/service-name: web } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ port: ${e.port} }]
`,
  );
  const rule = (path: string, session: string) =>
    `    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
      backendRefs: [{ name: web, port: 80 }]
      sessionPersistence: ${session}`;
  return [
    `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: gatehouse }
spec: { controllerName: gatehouse.dev/gateway-controller }
`,
    `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: sticky }
spec:
  gatewayClassName: gatehouse
  addresses: [{ type: IPAddress, value: 127.0.0.1 }]
  listeners: [{ name: http, port: ${listenerPort}, protocol: HTTP }]
`,
    `apiVersion: v1
kind: Service
metadata: { name: web, namespace: sticky }
spec: { ports: [{ port: 80 }] }
`,
    ...slices,
    `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: web, namespace: sticky }
spec:
  parentRefs: [{ name: gw }]
  rules:
${rule("/plain", "{ sessionName: plain }")}
${rule("/timed", "{ sessionName: timed, idleTimeout: 1m, absoluteTimeout: 1h }")}
${rule("/brief", "{ sessionName: brief, idleTimeout: 1s }")}
`,
  ].join("---\n");
}

forEachFront("sticky sessions across two gateway processes", (front) => {
  const echoes: EchoServer[] = [];
  const replicas: GatewayProcess[] = [];
  const ports: number[] = [];
  let dir: string;

  beforeAll(async () => {
    echoes.push(startEchoServer({ pod: "web-a" }), startEchoServer({ pod: "web-b" }));
    dir = await mkdtemp(join(tmpdir(), "gatehouse-sticky-"));
    const keyFile = join(dir, "session.key");
    await writeFile(keyFile, `${randomBytes(32).toString("base64")}\n`);
    for (const name of ["one", "two"]) {
      const port = await freePort();
      ports.push(port);
      await Bun.$`mkdir -p ${join(dir, name)}`;
      await writeFile(join(dir, name, "all.yaml"), folderYaml(port, echoes));
      replicas.push(
        await startGatewayProcess(join(dir, name), ["--front", front, "--session-key-file", keyFile]),
      );
    }
    // A Gateway listener is bound after the config applies; wait until both answer.
    for (const port of ports)
      for (let i = 0; i < 100; i++) {
        const ok = await fetch(`http://127.0.0.1:${port}/plain`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        await Bun.sleep(50);
      }
  }, 40_000);

  afterAll(async () => {
    for (const r of replicas) await r.kill();
    for (const e of echoes) e.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** One request to replica `n`, with the session cookie `cookie` when given. */
  async function get(n: number, path: string, cookie?: string) {
    const res = await fetch(`http://127.0.0.1:${ports[n]}${path}`, {
      headers: cookie ? { cookie } : {},
    });
    const body = (await res.json()) as { pod: string };
    const set = res.headers.get("set-cookie");
    return { status: res.status, pod: body.pod, cookie: set === null ? undefined : set.split(";")[0] };
  }

  for (const [path, timed] of [
    ["/plain", false],
    ["/timed", true],
  ] as const)
    test(`${path}: pinned by the first replica, the second sends the client to the same endpoint`, async () => {
      const first = await get(0, path);
      expect(first.status).toBe(200);
      const cookie = first.cookie as string;
      expect(cookie).toBeDefined();
      // The timed token carries signed stamps: endpoint.start.last.mac.
      expect(cookie.split("=")[1]?.split(".").length).toBe(timed ? 4 : 1);
      for (let i = 0; i < 6; i++) {
        const again = await get(i % 2 === 0 ? 1 : 0, path, cookie);
        expect(again.pod).toBe(first.pod);
        expect(again.cookie).toBeUndefined();
      }
    });

  test("/timed: a forged token (changed MAC, or stamps re-signed by nobody) is balanced anew and reissued", async () => {
    const { cookie } = await get(0, "/timed");
    const [name, value] = (cookie as string).split("=") as [string, string];
    const [endpoint, start, last, mac] = value.split(".") as [string, string, string, string];
    const flipped = `${mac.slice(0, 3)}${mac[3] === "A" ? "B" : "A"}${mac.slice(4)}`;
    const later = (Number.parseInt(last, 36) + 1_000).toString(36);
    const forged = [
      `${name}=${endpoint}.${start}.${later}.${mac}`,
      `${name}=${endpoint}.${start}.${last}.${flipped}`,
      `${name}=${endpoint}`,
    ];
    const pods = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const res = await get(1, "/timed", forged[i % forged.length]);
      expect(res.status).toBe(200);
      pods.add(res.pod);
      expect(res.cookie).toBeDefined();
      expect(res.cookie).not.toBe(forged[i % forged.length]);
      // The reissued token is genuine: the first replica keeps it on the endpoint it names.
      const back = await get(0, "/timed", res.cookie);
      expect(back.pod).toBe(res.pod);
      expect(back.cookie).toBeUndefined();
    }
    expect(pods.size).toBe(2);
  });

  test("/brief (idleTimeout 1s): an expired token starts a new session; a used one is kept alive", async () => {
    const first = await get(0, "/brief");
    const cookie = first.cookie as string;
    // Used within a quarter of the idle timeout: kept, no new cookie; after that: a refreshed stamp.
    expect((await get(1, "/brief", cookie)).cookie).toBeUndefined();
    await Bun.sleep(400);
    const refreshed = await get(1, "/brief", cookie);
    expect(refreshed.pod).toBe(first.pod);
    expect(refreshed.cookie).toBeDefined();
    expect(refreshed.cookie?.split(".")[1]).toBe(cookie.split(".")[1]);
    await Bun.sleep(1_100);
    const pods = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const expired = await get(i % 2, "/brief", cookie);
      expect(expired.status).toBe(200);
      expect(expired.cookie).toBeDefined();
      expect(expired.cookie?.split(".")[1]).not.toBe(cookie.split(".")[1]);
      pods.add(expired.pod);
    }
    // Balanced anew, not pinned: with two endpoints in round robin both take such requests.
    expect(pods.size).toBe(2);
  });
});
