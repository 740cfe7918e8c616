import { afterAll, beforeAll, expect, test } from "bun:test";
import dgram from "node:dgram";
import { startUdpEchoServer, type UdpEchoServer } from "../../../test/helpers/udp-echo-server.ts";
import type { GatewayModel } from "../../model/index.ts";
import { compilePassthrough } from "./table.ts";
import { UdpRelay } from "./udp-relay.ts";

let echo: UdpEchoServer;
let relay: UdpRelay;

beforeAll(async () => {
  echo = await startUdpEchoServer({ pod: "echo" });
  const model: GatewayModel = {
    listeners: [],
    backends: {
      echo: {
        id: "echo",
        service: { namespace: "t", name: "echo", port: 53 },
        protocol: "http",
        endpoints: [{ address: "127.0.0.1", port: echo.port }],
      },
    },
    passthroughListeners: [
      {
        name: "gw/udp",
        address: "127.0.0.1",
        port: 0,
        protocol: "UDP",
        source: { kind: "Gateway", namespace: "t", name: "gw" },
        routes: [
          {
            name: "r",
            source: { kind: "UDPRoute", namespace: "t", name: "r" },
            hostnames: [{ hostname: "*", match: "Any" }],
            backends: [{ backendId: "echo", weight: 1 }],
          },
        ],
      },
    ],
  };
  const table = [...compilePassthrough(model, "127.0.0.1").values()][0];
  if (table === undefined) throw new Error("no table");
  relay = await UdpRelay.open(table, 0, { maxFlows: 3, idleTimeoutMs: 0 });
});

afterAll(async () => {
  await relay?.stop();
  echo?.stop();
});

/** A client socket that sends one datagram and waits for the answer; kept open (its flow stays). */
async function client(): Promise<dgram.Socket> {
  const s = dgram.createSocket("udp4");
  const answered = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no answer")), 2000);
    s.once("message", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  s.send("hi", relay.port, "127.0.0.1");
  await answered;
  return s;
}

test("a flood of clients past the flow cap: the oldest flows are closed and counted, the new ones served", async () => {
  const clients: dgram.Socket[] = [];
  for (let i = 0; i < 7; i++) clients.push(await client());
  expect(relay.openFlows).toBe(3);
  expect(relay.stats.routed).toBe(7);
  expect(relay.stats.evicted).toBe(4);
  // The first client's flow was evicted: its next datagram opens a new flow (and evicts another).
  const first = clients[0] as dgram.Socket;
  const again = new Promise<void>((resolve) => first.once("message", () => resolve()));
  first.send("again", relay.port, "127.0.0.1");
  await again;
  expect(relay.stats.routed).toBe(8);
  expect(relay.stats.evicted).toBe(5);
  for (const c of clients) c.close();
});
