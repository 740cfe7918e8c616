/**
 * Client address lists in the real request path, on both fronts: one dual-stack listener (`::`), so a
 * request to 127.0.0.1 arrives from the IPv4-mapped `::ffff:127.0.0.1` and one to [::1] from `::1`. An
 * allowed client reaches the backend; a refused one gets 403 problem+json and the backend sees nothing.
 * Deny beats allow, every list of a route must admit the client, a list marked invalid refuses everyone,
 * and a forged X-Forwarded-For from an untrusted peer changes nothing. On the raw front such routes stay
 * on the fast path (checked through the compiled table).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import type { IPAccessList, Route } from "../../../src/model/index.ts";
import { compile } from "../../../src/proxy/compile.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { isFastRoute } from "../../../src/proxy/raw-front/plan.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const source = { kind: "AuthPolicy", namespace: "test", name: "ips" } as const;
const lists = (allow: string[], deny: string[] = [], invalid?: string): IPAccessList => ({
  source,
  allow,
  deny,
  ...(invalid !== undefined ? { invalid } : {}),
});

const routes: Route[] = [
  route("local", match("/local"), forwardTo("app"), { ipAccess: [lists(["127.0.0.1/32", "::1"])] }),
  route("v4", match("/v4"), forwardTo("app"), { ipAccess: [lists(["127.0.0.0/8"])] }),
  route("v6", match("/v6"), forwardTo("app"), { ipAccess: [lists(["::1/128"])] }),
  route("deny-v4", match("/deny-v4"), forwardTo("app"), { ipAccess: [lists([], ["127.0.0.1"])] }),
  route("deny-wins", match("/deny-wins"), forwardTo("app"), {
    ipAccess: [lists(["127.0.0.1", "::1"], ["127.0.0.0/8", "::/0"])],
  }),
  route("two-lists", match("/two-lists"), forwardTo("app"), {
    ipAccess: [lists(["127.0.0.1", "::1"]), lists([], ["::1"])],
  }),
  route("invalid", match("/invalid"), forwardTo("app"), {
    ipAccess: [lists(["0.0.0.0/0", "::/0"], [], "a list could not be read")],
  }),
  route(
    "redirect",
    match("/redirect"),
    { kind: "Redirect", statusCode: 302, hostname: "x.test" },
    {
      ipAccess: [lists(["::1"])],
    },
  ),
  route("open", match("/"), forwardTo("app")),
];

test("routes with address lists stay on the raw front's fast path", () => {
  const table = compile(model([listener([vhost("app.test", routes)])], [backend("app", [1])]));
  const compiled = table.listeners[0]?.hosts.exact.get("app.test")?.routes ?? [];
  const forwards = compiled.filter((r) => r.action.kind === "Forward");
  expect(forwards.length).toBe(routes.length - 1);
  for (const r of forwards) expect([r.name, isFastRoute(r)]).toEqual([r.name, true]);
});

forEachFront("client address lists", (front) => {
  let upstream: TestUpstream;
  let proxy: GatewayServer;
  let port: number;

  beforeAll(async () => {
    upstream = startUpstream("app");
    proxy = new GatewayServer({ bind: "::", front });
    await proxy.apply(
      model([listener([vhost("app.test", routes)], { address: "::" })], [backend("app", [upstream.port])]),
    );
    port = proxy.ports()[0]?.port as number;
  });

  afterAll(async () => {
    await proxy?.stop();
    await upstream?.stop();
  });

  async function send(host: "127.0.0.1" | "[::1]", path: string, headers: Record<string, string> = {}) {
    const before = upstream.requests.length;
    const res = await fetch(`http://${host}:${port}${path}`, {
      headers: { host: "app.test", ...headers },
      redirect: "manual",
    });
    const body = await res.text();
    return {
      status: res.status,
      type: res.headers.get("content-type"),
      body,
      reached: upstream.requests.length > before,
    };
  }

  async function refused(host: "127.0.0.1" | "[::1]", path: string, headers: Record<string, string> = {}) {
    const r = await send(host, path, headers);
    expect([host, path, r.status, r.type, r.reached]).toEqual([
      host,
      path,
      403,
      "application/problem+json",
      false,
    ]);
    expect(JSON.parse(r.body)).toMatchObject({ status: 403, title: "Forbidden" });
  }

  async function admitted(host: "127.0.0.1" | "[::1]", path: string) {
    const r = await send(host, path);
    expect([host, path, r.status, r.reached]).toEqual([host, path, 200, true]);
  }

  describe("IPv4 (mapped on a dual-stack socket) and IPv6 clients", () => {
    test("a route without lists serves both", async () => {
      await admitted("127.0.0.1", "/");
      await admitted("[::1]", "/");
    });

    test("an allow list serves the clients it names and refuses the others", async () => {
      await admitted("127.0.0.1", "/local");
      await admitted("[::1]", "/local");
      await admitted("127.0.0.1", "/v4");
      await refused("[::1]", "/v4");
      await admitted("[::1]", "/v6");
      await refused("127.0.0.1", "/v6");
    });

    test("a deny list refuses the clients it names; deny beats allow", async () => {
      await refused("127.0.0.1", "/deny-v4");
      await admitted("[::1]", "/deny-v4");
      await refused("127.0.0.1", "/deny-wins");
      await refused("[::1]", "/deny-wins");
    });

    test("every list of a route must admit the client", async () => {
      await admitted("127.0.0.1", "/two-lists");
      await refused("[::1]", "/two-lists");
    });

    test("an invalid list refuses everyone (never open)", async () => {
      await refused("127.0.0.1", "/invalid");
      await refused("[::1]", "/invalid");
    });

    test("routes that are not forwarded are guarded too", async () => {
      expect((await send("[::1]", "/redirect")).status).toBe(302);
      await refused("127.0.0.1", "/redirect");
    });

    test("a forged X-Forwarded-For from an untrusted peer is not believed", async () => {
      await refused("[::1]", "/v4", { "x-forwarded-for": "127.0.0.1" });
      await refused("127.0.0.1", "/deny-v4", { "x-forwarded-for": "10.1.1.1" });
    });
  });
});

/** From the resources on: an AuthPolicy with lists only, on an Ingress beside another Ingress. */
function policyManifests(upstreamPort: number): string {
  const ingress = (name: string, host: string) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: shop }
spec:
  ingressClassName: gatehouse
  rules:
    - host: ${host}
      http:
        paths: [{ path: /, pathType: Prefix, backend: { service: { name: app, port: { number: 80 } } } }]
`;
  const policy = (name: string, target: string, lists: string) => `apiVersion: gatehouse.dev/v1alpha1
kind: AuthPolicy
metadata: { name: ${name}, namespace: shop }
spec:
  targetRefs: [{ group: networking.k8s.io, kind: Ingress, name: ${target} }]
  ${lists}
`;
  return [
    ingress("inside", "inside.test"),
    ingress("outside", "outside.test"),
    ingress("broken", "broken.test"),
    policy("loopback", "inside", "ipAllowList: [127.0.0.0/8, '::1']"),
    policy("offices", "outside", "ipAllowList: [10.0.0.0/8]\n  ipDenyList: ['2001:db8::/32']"),
    policy("bad", "broken", "ipAllowList: [127.0.0.0/8, 10.0.0.0/33]"),
    `apiVersion: v1
kind: Service
metadata: { name: app, namespace: shop }
spec: { ports: [{ name: http, port: 80 }] }
`,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: app-1, namespace: shop, labels: { kubernetes.io/service-name: app } }
addressType: IPv4
endpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]
ports: [{ name: http, port: ${upstreamPort} }]
`,
  ].join("---\n");
}

forEachFront("an AuthPolicy's client address lists, from a folder", (front) => {
  let upstream: TestUpstream;
  let dir: string;
  let gw: RunningGateway;
  let port: number;

  beforeAll(async () => {
    upstream = startUpstream("app");
    dir = await mkdtemp(join(tmpdir(), "gatehouse-ip-access-"));
    await writeFile(join(dir, "all.yaml"), policyManifests(upstream.port));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    await upstream?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("an allowed client is served without authentication; others get 403; a bad entry fails closed (401)", async () => {
    const get = async (host: string) => {
      const before = upstream.requests.length;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: { host } });
      await res.arrayBuffer();
      return {
        status: res.status,
        type: res.headers.get("content-type"),
        reached: upstream.requests.length > before,
      };
    };
    expect(await get("inside.test")).toMatchObject({ status: 200, reached: true });
    expect(await get("outside.test")).toEqual({
      status: 403,
      type: "application/problem+json",
      reached: false,
    });
    expect(await get("broken.test")).toMatchObject({ status: 401, reached: false });
  });
});
