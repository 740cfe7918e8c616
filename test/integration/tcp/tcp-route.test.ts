/**
 * TCP listeners and TCPRoutes over real sockets: a GatewayServer given the model translation makes for a
 * TCP listener (tcproute golden), upstream's echo-basic TCP stand-in as the backends. Every connection
 * goes to the oldest route's backends by weight (a weight-0 backend never, a refused one's share closed),
 * bytes flow both ways in order with backpressure (a 4 MB upload and download), a client's FIN reaches
 * the backend, and an apply that removes the listener closes it. Run on both fronts: TCP listeners are
 * raw sockets whatever the front, which the second run proves.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, createServer, type Socket } from "node:net";
import type { GatewayModel, SNIRoute } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { backend, streamRoute } from "../../../src/proxy/testing/model.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTcpEchoServer, type TcpEchoServer, tcpWelcome } from "../../helpers/tcp-echo-server.ts";

const source = { kind: "Gateway", namespace: "test", name: "gw" } as const;

/** Connect, read the welcome, send TEST, and return the pod that answered. */
function whoAnswers(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const s = connect({ host: "127.0.0.1", port }, () => s.write("TEST\n"));
    s.on("data", (d) => {
      text += d.toString();
      const lines = text.split("\n");
      if (lines.length >= 3) {
        s.destroy();
        if (lines[0] !== tcpWelcome.trim()) reject(new Error(`welcome: ${lines[0]}`));
        resolve((JSON.parse(lines[1] as string) as { pod: string }).pod);
      }
    });
    s.on("error", reject);
    s.on("close", () => reject(new Error(`closed after ${JSON.stringify(text)}`)));
  });
}

/** Whether the gateway closes the connection without a byte (false: a backend said its welcome). */
function closedAtOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.on("data", () => {
      s.destroy();
      resolve(false);
    });
    s.on("error", () => {});
    s.on("close", () => resolve(true));
  });
}

forEachFront("TCPRoute data plane", (front) => {
  let one: TcpEchoServer;
  let two: TcpEchoServer;
  let idle: TcpEchoServer;
  let sink: ReturnType<typeof createServer>;
  let sinkPort = 0;
  let gateway: GatewayServer;
  let port = 0;
  let restore: ((line: string) => void) | undefined;

  /** A backend that counts what it received and, on the client's FIN, answers the count and ends. */
  function startSink(): Promise<void> {
    sink = createServer((s: Socket) => {
      let n = 0;
      s.on("data", (d) => {
        n += d.length;
      });
      s.on("end", () => s.end(`${n}\n${"z".repeat(4 * 1024 * 1024)}`));
    });
    return new Promise((r) =>
      sink.listen(0, "127.0.0.1", () => {
        sinkPort = (sink.address() as { port: number }).port;
        r();
      }),
    );
  }

  const model = (routes: SNIRoute[], listener = true): GatewayModel => ({
    listeners: [],
    backends: {
      one: backend("one", [one.port]),
      two: backend("two", [two.port]),
      idle: backend("idle", [idle.port]),
      sink: backend("sink", [sinkPort]),
    },
    ...(listener
      ? {
          passthroughListeners: [
            { name: "gateway/test/gw/tcp", address: "127.0.0.1", port, source, protocol: "TCP", routes },
          ],
        }
      : {}),
  });

  beforeAll(async () => {
    restore = setLogSink(() => {});
    one = await startTcpEchoServer({ pod: "one" });
    two = await startTcpEchoServer({ pod: "two" });
    idle = await startTcpEchoServer({ pod: "idle" });
    await startSink();
    gateway = new GatewayServer({ bind: "127.0.0.1", front, streamIdleTimeoutMs: 600 });
    await gateway.apply(model([streamRoute("TCPRoute", "older", [{ backendId: "one", weight: 1 }])]));
    port = gateway.ports().find((p) => p.listener === "gateway/test/gw/tcp")?.port ?? 0;
  });

  afterAll(async () => {
    await gateway?.stop(true);
    await Promise.all([one?.stop(), two?.stop(), idle?.stop()]);
    sink?.close();
    if (restore) setLogSink(restore);
  });

  test("the listener is bound and a connection reaches the route's backend, no ClientHello needed", async () => {
    expect(port).toBeGreaterThan(0);
    expect(await whoAnswers(port)).toBe("one");
  });

  test("two routes: every connection goes to the oldest; weights split, weight 0 never picked", async () => {
    await gateway.apply(
      model([
        streamRoute("TCPRoute", "older", [
          { backendId: "one", weight: 3 },
          { backendId: "two", weight: 1 },
          { backendId: "idle", weight: 0 },
        ]),
        streamRoute("TCPRoute", "newer", [{ backendId: "idle", weight: 1 }]),
      ]),
    );
    const pods: string[] = [];
    for (let i = 0; i < 40; i++) pods.push(await whoAnswers(port));
    const count = (p: string) => pods.filter((x) => x === p).length;
    expect([count("one"), count("two"), count("idle")]).toEqual([30, 10, 0]);
  });

  test("a refused backendRef's share is closed, never moved to the valid backend", async () => {
    await gateway.apply(
      model([
        streamRoute("TCPRoute", "half", [
          { backendId: "one", weight: 1 },
          { backendId: "other/ns:1", weight: 1, refused: true },
        ]),
      ]),
    );
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push((await closedAtOnce(port)) ? "closed" : "served");
    expect(outcomes.filter((o) => o === "closed").length).toBe(3);
  });

  test("4 MB each way in order: the client's FIN reaches the backend, its answer comes back whole", async () => {
    await gateway.apply(model([streamRoute("TCPRoute", "sink", [{ backendId: "sink", weight: 1 }])]));
    const upload = new Uint8Array(4 * 1024 * 1024).fill(120);
    const answer = await new Promise<string>((resolve, reject) => {
      const parts: Buffer[] = [];
      const s = connect({ host: "127.0.0.1", port }, () => s.end(upload));
      s.on("data", (d: Buffer) => parts.push(d));
      s.on("end", () => resolve(Buffer.concat(parts).toString()));
      s.on("error", reject);
    });
    const [count, rest] = [answer.slice(0, answer.indexOf("\n")), answer.slice(answer.indexOf("\n") + 1)];
    expect(count).toBe(String(upload.length));
    expect(rest.length).toBe(4 * 1024 * 1024);
    expect(/^z+$/.test(rest)).toBe(true);
  });

  test("a connection silent both ways past the idle timeout is closed and counted; talking keeps it", async () => {
    await gateway.apply(model([streamRoute("TCPRoute", "older", [{ backendId: "one", weight: 1 }])]));
    const before = gateway.passthrough.stats().get("gateway/test/gw/tcp")?.idleClosed ?? 0;
    const talker = connect({ host: "127.0.0.1", port });
    talker.on("data", () => {});
    talker.on("error", () => {});
    const ping = setInterval(() => talker.write("PING\n"), 150);
    try {
      const started = Date.now();
      const closedAfter = await new Promise<number>((resolve) => {
        const s = connect({ host: "127.0.0.1", port });
        s.on("data", () => {}); // flowing, so that the FIN is seen
        s.on("error", () => {});
        s.on("close", () => resolve(Date.now() - started));
      });
      expect(closedAfter).toBeGreaterThanOrEqual(550);
      expect(closedAfter).toBeLessThan(3000);
      expect(talker.destroyed).toBe(false);
    } finally {
      clearInterval(ping);
      talker.destroy();
    }
    const stats = gateway.passthrough.stats().get("gateway/test/gw/tcp");
    expect(stats?.idleClosed).toBe(before + 1);
    expect(stats?.routed).toBeGreaterThan(40);
    expect(stats?.refused).toBeGreaterThanOrEqual(3);
    expect(stats?.bytesToUpstream).toBeGreaterThan(4 * 1024 * 1024);
    expect(stats?.bytesToClient).toBeGreaterThan(4 * 1024 * 1024);
  });

  test("a backend that never reads: the gateway stops reading the client, memory stays bounded", async () => {
    const stuck = createServer((sock: Socket) => sock.pause());
    await new Promise<void>((r) => stuck.listen(0, "127.0.0.1", () => r()));
    const stuckPort = (stuck.address() as { port: number }).port;
    const m = model([streamRoute("TCPRoute", "stuck", [{ backendId: "stuck", weight: 1 }])]);
    await gateway.apply({ ...m, backends: { ...m.backends, stuck: backend("stuck", [stuckPort]) } });
    const before = gateway.passthrough.stats().get("gateway/test/gw/tcp")?.bytesToUpstream ?? 0;
    const client = connect({ host: "127.0.0.1", port });
    client.on("error", () => {});
    const chunk = new Uint8Array(1024 * 1024).fill(1);
    let offered = 0;
    await new Promise<void>((resolve) => client.on("connect", () => resolve()));
    // Offer 64 MB as fast as the socket takes it; a gateway that kept reading would take all of it.
    for (let i = 0; i < 64; i++) {
      client.write(chunk);
      offered += chunk.length;
    }
    // Well within this suite's idle timeout (600 ms), which would close a stalled connection.
    await Bun.sleep(400);
    const carried = (gateway.passthrough.stats().get("gateway/test/gw/tcp")?.bytesToUpstream ?? 0) - before;
    client.destroy();
    stuck.close();
    expect(offered).toBe(64 * 1024 * 1024);
    // What the kernel buffers on both hops plus at most one read's worth held here: far below 64 MB.
    expect(carried).toBeLessThan(24 * 1024 * 1024);
  });

  test("removing the listener closes it", async () => {
    await gateway.apply(model([], false));
    const refused = await new Promise<boolean>((resolve) => {
      const s = connect({ host: "127.0.0.1", port });
      s.on("connect", () => {
        s.destroy();
        resolve(false);
      });
      s.on("error", () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
