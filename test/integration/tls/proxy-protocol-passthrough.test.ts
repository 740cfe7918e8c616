/**
 * `--proxy-protocol` on a TLS passthrough port shared with an HTTPS listener (`--enable-ssl-passthrough`,
 * raw front): the passthrough socket reads the PROXY header (from a trusted proxy only), then the
 * ClientHello; a connection it hands to the HTTPS listener carries the header's client, which the
 * backend sees in X-Forwarded-For. The trusted proxy is a second loopback address (127.0.0.2).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect as connectTcp } from "node:net";
import { connect } from "node:tls";
import type { GatewayModel } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { backend, forwardTo, listener, match, route, vhost } from "../../../src/proxy/testing/model.ts";
import { type Received, startUpstream, type TestUpstream } from "../../../src/proxy/testing/upstream.ts";
import { freePort } from "../../helpers/ports.ts";

const passCert = selfSigned("pass.example");
const termCert = selfSigned("term.example");
const TRUSTED = "127.0.0.2";
const tlsBackend = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: passCert.certPem, key: passCert.keyPem },
  fetch: () => new Response("passed through"),
});

function sharedModel(port: number, up: number): GatewayModel {
  return {
    listeners: [
      listener([vhost("term.example", [route("all", match("/"), forwardTo("up"))])], {
        name: "test/https",
        protocol: "HTTPS",
        port,
        tls: { certificates: [termCert] },
      }),
    ],
    backends: {
      up: backend("up", [up]),
      "test/pass:443": {
        id: "test/pass:443",
        service: { namespace: "test", name: "pass", port: 443 },
        protocol: "http",
        endpoints: [{ address: "127.0.0.1", port: tlsBackend.port as number }],
      },
    },
    passthroughListeners: [
      {
        name: "test/tls",
        address: "127.0.0.1",
        port,
        source: { kind: "Gateway", namespace: "test", name: "gw" },
        routes: [
          {
            name: "tlsroute/test/pass",
            source: { kind: "TLSRoute", namespace: "test", name: "pass" },
            hostnames: [{ hostname: "pass.example", match: "Exact" }],
            backends: [{ backendId: "test/pass:443", weight: 1 }],
          },
        ],
      },
    ],
  };
}

/** A GET over TLS with SNI `servername` after `preamble`, from `from`: the body, or "closed". */
function get(port: number, servername: string, from: string, preamble?: string): Promise<string> {
  return new Promise((resolve) => {
    let raw = "";
    const tcp = connectTcp({ host: "127.0.0.1", port, localAddress: from }, () => {
      if (preamble !== undefined) tcp.write(preamble);
      const s = connect({ socket: tcp, servername, rejectUnauthorized: false }, () =>
        s.write(`GET /x HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`),
      );
      s.on("data", (d: Buffer) => {
        raw += d.toString("latin1");
      });
      s.on("error", () => {});
      s.on("close", () => {
        const at = raw.indexOf("\r\n\r\n");
        resolve(at < 0 ? "closed" : raw.slice(at + 4));
      });
    });
    tcp.on("error", () => resolve("closed"));
    tcp.setTimeout(5000, () => tcp.destroy());
  });
}

describe("--proxy-protocol on a port shared by TLS passthrough and HTTPS", () => {
  let up: TestUpstream;
  let gw: GatewayServer;
  let port: number;
  let restoreSink: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restoreSink = setLogSink(() => {});
    up = startUpstream("up");
    gw = new GatewayServer({
      bind: "127.0.0.1",
      front: "raw",
      sharedTlsPorts: true,
      trustedProxies: [`${TRUSTED}/32`],
      proxyProtocol: "all",
    });
    port = await freePort();
    await gw.apply(sharedModel(port, up.port));
  });

  afterAll(async () => {
    await gw.stop();
    await up.stop();
    tlsBackend.stop(true);
    if (restoreSink) setLogSink(restoreSink);
  });

  test("the header's client reaches the terminating listener; a TLSRoute's SNI is still passed through", async () => {
    const header = "PROXY TCP4 203.0.113.7 10.0.0.1 40000 443\r\n";
    const body = await get(port, "term.example", TRUSTED, header);
    expect((JSON.parse(body) as Received).headers["x-forwarded-for"]).toBe("203.0.113.7");
    expect(await get(port, "pass.example", TRUSTED, header)).toBe("passed through");
  });

  test("refused: no header, or a header from a peer outside --trusted-proxies", async () => {
    expect(await get(port, "term.example", TRUSTED)).toBe("closed");
    expect(await get(port, "term.example", "127.0.0.1", "PROXY TCP4 203.0.113.7 10.0.0.1 1 2\r\n")).toBe(
      "closed",
    );
  });
});
