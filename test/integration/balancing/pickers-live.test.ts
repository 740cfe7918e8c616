/**
 * The balancing the annotations cannot reach yet (least request, Header sessions) and what sessions must
 * survive, live on both fronts from models: least request keeps new requests off an endpoint that holds
 * requests; a Header session hands out and honours its header; a session cookie issued by one gateway is
 * honoured by another (nothing per process in it); an endpoint that leaves moves its clients, with a new
 * cookie; `changeOnFailure` moves a client whose endpoint refuses connections.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Backend, Balancing, GatewayModel } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { endpointToken } from "../../../src/proxy/balancing/session-token.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { backend, listener, match, model, route, vhost } from "../../../src/proxy/testing/model.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";

/** Answers its name at once, or after `holdMs` on `/slow` paths. */
function namedBackend(name: string, holdMs = 0) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (holdMs > 0 && new URL(req.url).pathname.startsWith("/slow")) await Bun.sleep(holdMs);
      return new Response(name);
    },
  });
}

const forward = (balancing: Balancing) =>
  ({ kind: "Forward", backends: [{ backendId: "web", weight: 1, filters: [] }], balancing }) as const;

function gatewayModel(ports: number[]): GatewayModel {
  const cookie: Balancing = { algorithm: "RoundRobin", session: { type: "Cookie", name: "S" } };
  return model(
    [
      listener([
        vhost("lr.test", [route("lr", match("/"), forward({ algorithm: "LeastRequest" }))]),
        vhost("header.test", [
          route(
            "header",
            match("/"),
            forward({ algorithm: "RoundRobin", session: { type: "Header", name: "X-Session" } }),
          ),
        ]),
        vhost("cookie.test", [route("cookie", match("/"), forward(cookie))]),
        vhost("moving.test", [
          route(
            "moving",
            match("/"),
            forward({ ...cookie, session: { type: "Cookie", name: "S", changeOnFailure: true } }),
            { retry: { attempts: 1, codes: [], backoffMs: 0 } },
          ),
        ]),
      ]),
    ],
    [backend("web", ports) as Backend],
  );
}

forEachFront("balancing pickers and sessions, live", (front) => {
  let fast: ReturnType<typeof namedBackend>;
  let slow: ReturnType<typeof namedBackend>;
  let gw: GatewayServer;
  let other: GatewayServer;
  let port: number;
  let otherPort: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    fast = namedBackend("fast");
    slow = namedBackend("slow", 1500);
    gw = new GatewayServer({ bind: "127.0.0.1", defaultUpstreamTimeoutMs: 5000, front });
    other = new GatewayServer({ bind: "127.0.0.1", defaultUpstreamTimeoutMs: 5000, front });
    const ports = [slow.port as number, fast.port as number];
    await gw.apply(gatewayModel(ports));
    await other.apply(gatewayModel(ports));
    port = gw.ports()[0]?.port ?? 0;
    otherPort = other.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw?.stop();
    await other?.stop();
    fast?.stop(true);
    slow?.stop(true);
    if (restore) setLogSink(restore);
  });

  async function get(host: string, path = "/", headers: Record<string, string> = {}, at = port) {
    const res = await fetch(`http://127.0.0.1:${at}${path}`, { headers: { host, ...headers } });
    return { status: res.status, name: await res.text(), headers: res.headers };
  }

  test("least request: while one endpoint holds requests, new ones go to the other", async () => {
    // Eight slow requests at once: the two endpoints split them (each pick sees the other's count).
    const held = Array.from({ length: 8 }, () => get("lr.test", "/slow"));
    await Bun.sleep(200);
    const names: string[] = [];
    for (let i = 0; i < 10; i++) names.push((await get("lr.test", "/quick")).name);
    // The slow endpoint still holds its share of /slow: every quick request went to the fast one.
    expect(names).toEqual(new Array(10).fill("fast"));
    const done = await Promise.all(held);
    expect(done.map((d) => d.status)).toEqual(new Array(8).fill(200));
    expect(new Set(done.map((d) => d.name)).has("slow")).toBe(true);
  });

  test("Header session: the token comes back in the header and keeps the client on its endpoint", async () => {
    const first = await get("header.test");
    const token = first.headers.get("x-session") as string;
    expect(token).toBe(endpointToken(`http://127.0.0.1:${first.name === "fast" ? fast.port : slow.port}`));
    for (let i = 0; i < 6; i++) {
      const again = await get("header.test", "/", { "x-session": token });
      expect(again.name).toBe(first.name);
      expect(again.headers.get("x-session")).toBeNull();
    }
  });

  test("a cookie issued by one gateway is honoured by another (every replica reads it alike)", async () => {
    const first = await get("cookie.test");
    const cookie = (first.headers.get("set-cookie") as string).split(";")[0] as string;
    for (let i = 0; i < 6; i++)
      expect((await get("cookie.test", "/", { cookie }, otherPort)).name).toBe(first.name);
  });

  test("changeOnFailure: an endpoint that refuses connections moves its client, with a new cookie", async () => {
    const closed = await freePort();
    const down = gatewayModel([closed, fast.port as number]);
    await gw.apply(down);
    try {
      const cookie = `S=${endpointToken(`http://127.0.0.1:${closed}`)}`;
      const res = await get("moving.test", "/", { cookie });
      expect(res.status).toBe(200);
      expect(res.name).toBe("fast");
      expect(res.headers.get("set-cookie")).toStartWith(
        `S=${endpointToken(`http://127.0.0.1:${fast.port}`)};`,
      );
      // Without changeOnFailure the client stays: its retry goes to the same refusing endpoint.
      expect((await get("cookie.test", "/", { cookie })).status).toBe(502);
    } finally {
      await gw.apply(gatewayModel([slow.port as number, fast.port as number]));
    }
  });

  test("an endpoint that leaves: its clients go elsewhere and get a new cookie", async () => {
    const cookie = `S=${endpointToken(`http://127.0.0.1:${slow.port}`)}`;
    expect((await get("cookie.test", "/", { cookie })).name).toBe("slow");
    await gw.apply(gatewayModel([fast.port as number]));
    try {
      const moved = await get("cookie.test", "/", { cookie });
      expect(moved.name).toBe("fast");
      expect(moved.headers.get("set-cookie")).toStartWith(
        `S=${endpointToken(`http://127.0.0.1:${fast.port}`)};`,
      );
    } finally {
      await gw.apply(gatewayModel([slow.port as number, fast.port as number]));
    }
  });
});
