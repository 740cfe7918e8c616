/**
 * UDP listeners and UDPRoutes over real sockets: a GatewayServer given the model translation makes for a
 * UDP listener (udproute golden), upstream's echo-basic UDP stand-in as the backends. Each client (source
 * address and port) is one flow: its datagrams and the backend's answers go through one upstream socket;
 * new clients are spread by weight (weight 0 never); a refused backendRef's share gets no answer; a flow
 * idle past `--udp-idle-timeout-ms` is closed and counted; removing the listener closes its port. Run on
 * both fronts: UDP listeners are the same sockets whatever the front, which the second run proves.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import dgram from "node:dgram";
import type { GatewayModel, SNIRoute } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { backend, streamRoute } from "../../../src/proxy/testing/model.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startUdpEchoServer, type UdpEchoServer } from "../../helpers/udp-echo-server.ts";

const source = { kind: "Gateway", namespace: "test", name: "gw" } as const;
const listenerName = "gateway/test/gw/udp";

/**
 * One client socket sending `count` datagrams, one at a time; the pods that answered, in order. `keep`
 * collects the socket instead of closing it, so that no later client gets its port (and so its flow).
 */
async function conversation(port: number, count: number, keep?: dgram.Socket[]): Promise<string[]> {
  const s = dgram.createSocket("udp4");
  const answers: string[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const reply = new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no answer in 2 s")), 2000);
        s.once("message", (m) => {
          clearTimeout(timer);
          resolve(m);
        });
      });
      s.send(`hello ${i}`, port, "127.0.0.1");
      const echo = JSON.parse((await reply).toString()) as { pod: string; request: string };
      expect(echo.request).toBe(`hello ${i}`);
      answers.push(echo.pod);
    }
  } finally {
    if (keep) keep.push(s);
    else s.close();
  }
  return answers;
}

forEachFront("UDPRoute data plane", (front) => {
  let one: UdpEchoServer;
  let two: UdpEchoServer;
  let idle: UdpEchoServer;
  let gateway: GatewayServer;
  let port = 0;
  let restore: ((line: string) => void) | undefined;

  const model = (routes: SNIRoute[], listener = true): GatewayModel => ({
    listeners: [],
    backends: {
      one: backend("one", [one.port]),
      two: backend("two", [two.port]),
      idle: backend("idle", [idle.port]),
    },
    ...(listener
      ? {
          passthroughListeners: [
            { name: listenerName, address: "127.0.0.1", port, source, protocol: "UDP", routes },
          ],
        }
      : {}),
  });

  beforeAll(async () => {
    restore = setLogSink(() => {});
    one = await startUdpEchoServer({ pod: "one" });
    two = await startUdpEchoServer({ pod: "two" });
    idle = await startUdpEchoServer({ pod: "idle" });
    gateway = new GatewayServer({ bind: "127.0.0.1", front, udpIdleTimeoutMs: 500 });
    await gateway.apply(model([streamRoute("UDPRoute", "older", [{ backendId: "one", weight: 1 }])]));
    port = gateway.ports().find((p) => p.listener === listenerName)?.port ?? 0;
  });

  afterAll(async () => {
    await gateway?.stop(true);
    for (const s of [one, two, idle]) s?.stop();
    if (restore) setLogSink(restore);
  });

  test("a client's datagrams reach the route's backend and its answers come back", async () => {
    expect(port).toBeGreaterThan(0);
    expect(await conversation(port, 3)).toEqual(["one", "one", "one"]);
  });

  test("two routes: flows go to the oldest; clients split by weight, one flow one backend, weight 0 never", async () => {
    await gateway.apply(
      model([
        streamRoute("UDPRoute", "older", [
          { backendId: "one", weight: 3 },
          { backendId: "two", weight: 1 },
          { backendId: "idle", weight: 0 },
        ]),
        streamRoute("UDPRoute", "newer", [{ backendId: "idle", weight: 1 }]),
      ]),
    );
    const firsts: string[] = [];
    const clients: dgram.Socket[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        const pods = await conversation(port, 3, clients);
        expect(new Set(pods).size).toBe(1);
        firsts.push(pods[0] as string);
      }
    } finally {
      for (const c of clients) c.close();
    }
    const count = (p: string) => firsts.filter((x) => x === p).length;
    expect([count("one"), count("two"), count("idle")]).toEqual([30, 10, 0]);
  });

  test("a refused backendRef's share gets no answer, never the valid backend's", async () => {
    await gateway.apply(
      model([
        streamRoute("UDPRoute", "half", [
          { backendId: "one", weight: 1 },
          { backendId: "other/ns:53", weight: 1, refused: true },
        ]),
      ]),
    );
    const outcomes: string[] = [];
    // Six new clients, each kept open until the end: a closed client's port taken by the next would be
    // the same flow, sent where the first went.
    const clients: dgram.Socket[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const s = dgram.createSocket("udp4");
        clients.push(s);
        const answered = new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve("silent"), 300);
          s.once("message", () => {
            clearTimeout(timer);
            resolve("answered");
          });
        });
        s.send("x", port, "127.0.0.1");
        outcomes.push(await answered);
      }
    } finally {
      for (const c of clients) c.close();
    }
    expect(outcomes.filter((o) => o === "silent").length).toBe(3);
  });

  test("an idle flow is closed and counted; the counters say what went through", async () => {
    await gateway.apply(model([streamRoute("UDPRoute", "older", [{ backendId: "one", weight: 1 }])]));
    const before = gateway.passthrough.stats().get(listenerName);
    const idleBefore = before?.idleClosed ?? 0;
    expect(await conversation(port, 1)).toEqual(["one"]);
    await Bun.sleep(1200);
    const stats = gateway.passthrough.stats().get(listenerName);
    expect(stats?.idleClosed).toBeGreaterThan(idleBefore);
    expect(stats?.routed).toBeGreaterThanOrEqual(41);
    expect(stats?.refused).toBeGreaterThanOrEqual(3);
    expect(stats?.bytesToUpstream).toBeGreaterThan(0);
    expect(stats?.bytesToClient).toBeGreaterThan(0);
  });

  test("removing the listener closes its port", async () => {
    await gateway.apply(model([], false));
    expect(gateway.ports().some((p) => p.listener === listenerName)).toBe(false);
    const rebound = dgram.createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      rebound.once("error", reject);
      rebound.bind(port, "127.0.0.1", () => resolve());
    });
    rebound.close();
  });
});
