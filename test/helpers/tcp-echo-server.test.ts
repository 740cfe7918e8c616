import { afterAll, describe, expect, test } from "bun:test";
import { connect as connectTcp, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { selfSigned } from "../../src/proxy/testing/certs.ts";
import { startTcpEchoServer, tcpWelcome } from "./tcp-echo-server.ts";

/** Open a connection, send `lines` one at a time and collect one answer line each (after the welcome). */
async function converse(socket: Socket, lines: readonly string[]): Promise<string[]> {
  let buffered = "";
  const waiters: ((line: string) => void)[] = [];
  socket.on("data", (c: Buffer) => {
    buffered += c.toString();
    for (let nl = buffered.indexOf("\n"); nl >= 0 && waiters.length; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl + 1);
      buffered = buffered.slice(nl + 1);
      waiters.shift()?.(line);
    }
  });
  const next = () => new Promise<string>((resolve) => waiters.push(resolve));
  const out = [await next()];
  for (const l of lines) {
    const answer = next();
    socket.write(`${l}\n`);
    out.push(await answer);
  }
  socket.destroy();
  return out;
}

describe("TCP echo (upstream echo-basic TCP_ECHO_SERVER)", async () => {
  const cert = selfSigned("tcp.example.com");
  const server = await startTcpEchoServer({
    namespace: "ns",
    service: "tcp-svc",
    pod: "tcp-backend-local-0",
    tls: { certPem: cert.certPem, keyPem: cert.keyPem },
  });
  afterAll(() => server.stop());

  test("plain: welcome, PING → PONG, IS_TLS → false, TEST → the pod context as JSON", async () => {
    const socket = connectTcp(server.port, "127.0.0.1");
    const [welcome, pong, isTls, json] = await converse(socket, ["PING", "IS_TLS", "TEST"]);
    expect(welcome).toBe(tcpWelcome);
    expect(pong).toBe("PONG\n");
    expect(isTls).toBe("false\n");
    expect(JSON.parse(json as string)).toMatchObject({
      namespace: "ns",
      service: "tcp-svc",
      pod: "tcp-backend-local-0",
      tcpport: String(server.port),
      isTLS: false,
    });
  });

  test("TLS port: the same lines, isTLS true and the SNI the client sent", async () => {
    const socket = connectTls({
      host: "127.0.0.1",
      port: server.tlsPort as number,
      servername: "tcp.example.com",
      ca: cert.certPem,
    });
    const [welcome, isTls, json] = await converse(socket, ["IS_TLS", "TEST"]);
    expect(welcome).toBe(tcpWelcome);
    expect(isTls).toBe("true\n");
    const echo = JSON.parse(json as string);
    expect(echo.isTLS).toBe(true);
    expect(echo.tls.serverName).toBe("tcp.example.com");
    expect(echo.tls.version).toMatch(/^TLSv1\.[23]$/);
  });

  test("unknown lines are ignored", async () => {
    const socket = connectTcp(server.port, "127.0.0.1");
    const [, pong] = await converse(socket, ["HELLO\nPING"]);
    expect(pong).toBe("PONG\n");
  });
});
