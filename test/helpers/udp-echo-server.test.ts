import { afterAll, describe, expect, test } from "bun:test";
import { startUdpEchoServer, udpExchange } from "./udp-echo-server.ts";

describe("UDP echo (upstream echo-basic UDP_ECHO_SERVER)", async () => {
  const server = await startUdpEchoServer({ namespace: "ns", service: "udp-svc", pod: "udp-v1-local-0" });
  afterAll(() => server.stop());

  test("a datagram is answered with the payload and the pod context, in Go's field order", async () => {
    const reply = await udpExchange("127.0.0.1", server.port, "gateway-api-conformance-udp-echo", 2000);
    expect(reply.toString()).toBe(
      '{"request":"gateway-api-conformance-udp-echo","namespace":"ns","ingress":"","service":"udp-svc","pod":"udp-v1-local-0"}',
    );
    expect(server.datagrams).toBe(1);
  });

  test("only the first 1024 bytes are read, as upstream's buffer", async () => {
    const reply = await udpExchange("127.0.0.1", server.port, "x".repeat(1500), 2000);
    expect(JSON.parse(reply.toString()).request).toHaveLength(1024);
  });

  test("no reply (nothing listens: refused, or silence until the deadline) is an error", async () => {
    server.stop();
    await expect(udpExchange("127.0.0.1", server.port, "ping", 200)).rejects.toThrow(
      /no UDP reply|ECONNREFUSED/,
    );
  });
});
