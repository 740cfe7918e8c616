/**
 * TLS listeners in mode Terminate, alone and beside a Passthrough listener on one port (mixed mode), over
 * real sockets: the client handshakes with the gateway's certificate for the SNI name, and the TCP echo
 * behind it reads plain text (it reports no TLS); the passthrough name on the same port still reaches its
 * backend's own certificate. A name no listener takes is closed. Run on both fronts: these listeners are
 * raw sockets whatever the front, which the second run proves.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:tls";
import type { GatewayModel } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTcpEchoServer, type TcpEchoServer, tcpWelcome } from "../../helpers/tcp-echo-server.ts";

const terminated = selfSigned("t.example");
const passed = selfSigned("p.example");
const source = { kind: "Gateway", namespace: "test", name: "gw" } as const;

/** Handshake with SNI `servername`, read the welcome, ask TEST: the certificate's CN and the echo's report. */
function talk(port: number, servername: string): Promise<{ cn: string; isTLS: boolean; pod: string }> {
  return new Promise((resolve, reject) => {
    let text = "";
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () =>
      s.write("TEST\n"),
    );
    s.on("data", (d) => {
      text += d.toString();
      const lines = text.split("\n");
      if (lines.length < 3) return;
      const cn = String(s.getPeerCertificate().subject?.CN);
      s.destroy();
      if (`${lines[0]}\n` !== tcpWelcome) reject(new Error(`welcome: ${lines[0]}`));
      const report = JSON.parse(lines[1] as string) as { isTLS: boolean; pod: string };
      resolve({ cn, isTLS: report.isTLS, pod: report.pod });
    });
    s.on("error", reject);
    s.on("close", () => reject(new Error(`closed after ${JSON.stringify(text)}`)));
  });
}

forEachFront("TLS listeners in mode Terminate", (front) => {
  let plain: TcpEchoServer;
  let secure: TcpEchoServer;
  let gateway: GatewayServer;
  let port = 0;
  let restore: ((line: string) => void) | undefined;

  const model = (): GatewayModel => ({
    listeners: [],
    backends: {
      plain: {
        id: "plain",
        service: { namespace: "test", name: "plain", port: 3000 },
        protocol: "http",
        endpoints: [{ address: "127.0.0.1", port: plain.port }],
      },
      secure: {
        id: "secure",
        service: { namespace: "test", name: "secure", port: 8443 },
        protocol: "http",
        endpoints: [{ address: "127.0.0.1", port: secure.tlsPort as number }],
      },
    },
    passthroughListeners: [
      {
        name: "gateway/test/gw/terminate",
        address: "127.0.0.1",
        port,
        hostname: "t.example",
        source,
        terminate: { certificates: [terminated] },
        routes: [route("t", "t.example", "plain")],
      },
      {
        name: "gateway/test/gw/passthrough",
        address: "127.0.0.1",
        port,
        hostname: "p.example",
        source,
        routes: [route("p", "p.example", "secure")],
      },
    ],
  });

  const route = (name: string, host: string, backendId: string) => ({
    name: `tlsroute/test/${name}`,
    source: { kind: "TLSRoute", namespace: "test", name },
    hostnames: [{ hostname: host, match: "Exact" as const }],
    backends: [{ backendId, weight: 1 }],
  });

  beforeAll(async () => {
    restore = setLogSink(() => {});
    plain = await startTcpEchoServer({ pod: "plain" });
    secure = await startTcpEchoServer({ pod: "secure", tls: passed });
    gateway = new GatewayServer({ bind: "127.0.0.1", front });
    await gateway.apply(model());
    // Both listeners on port 0 share one socket, as two listeners of one port do.
    port = gateway.ports().find((p) => p.listener.includes("terminate"))?.port ?? 0;
  });

  afterAll(async () => {
    await gateway?.stop(true);
    await Promise.all([plain?.stop(), secure?.stop()]);
    if (restore) setLogSink(restore);
  });

  test("the terminated name gets the gateway's certificate and the backend reads plain text", async () => {
    expect(await talk(port, "t.example")).toEqual({ cn: "t.example", isTLS: false, pod: "plain" });
  });

  test("on the same port, the passthrough name reaches its backend's own certificate", async () => {
    expect(await talk(port, "p.example")).toEqual({ cn: "p.example", isTLS: true, pod: "secure" });
  });

  test("a name neither listener takes is closed without a handshake", async () => {
    const outcome = await talk(port, "other.example").then(
      () => "served",
      (err: Error) => err.message,
    );
    expect(outcome).not.toBe("served");
  });

  test("the counters saw both routed connections", () => {
    const stats = gateway.passthrough.stats().get("gateway/test/gw/terminate,gateway/test/gw/passthrough");
    expect(stats?.routed).toBeGreaterThanOrEqual(2);
    expect(stats?.refused).toBeGreaterThanOrEqual(1);
    expect(stats?.bytesToUpstream).toBeGreaterThan(0);
  });
});
