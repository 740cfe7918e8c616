/**
 * One port, TLS passthrough and HTTPS termination (`--enable-ssl-passthrough`, raw front): the passthrough
 * socket reads each ClientHello; an SNI a TLSRoute takes is piped to its backend unopened (the client sees
 * the backend's certificate), any other is handed, ClientHello and all, to the HTTPS listener, which
 * terminates it and routes the request. Without the flag (or on `--front bun`) the passthrough listener is
 * not served and the HTTPS listener keeps the port.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:tls";
import type { GatewayModel } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import type { FrontKind } from "../../../src/proxy/listeners/server-options.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { backend, forwardTo, listener, match, route, vhost } from "../../../src/proxy/testing/model.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { freePort } from "../../helpers/ports.ts";

const passCert = selfSigned("pass.example");
const termCert = selfSigned("term.example");
let echo: EchoServer;
let restoreSink: ((line: string) => void) | undefined;
const tlsBackend = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: passCert.certPem, key: passCert.keyPem },
  fetch: () => new Response("passed through"),
});

function sharedModel(port: number): GatewayModel {
  const source = { kind: "Gateway", namespace: "test", name: "gw" } as const;
  return {
    listeners: [
      listener([vhost("term.example", [route("all", match("/"), forwardTo("echo"))])], {
        name: "test/https",
        protocol: "HTTPS",
        port,
        tls: { certificates: [termCert] },
      }),
    ],
    backends: {
      echo: backend("echo", [echo.port]),
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
        source,
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

/** One GET over TLS with SNI `servername`: the certificate seen and the status and body. */
function get(port: number, servername: string): Promise<{ cn: string; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let cn = "";
    let raw = "";
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      cn = String(s.getPeerCertificate()?.subject?.CN ?? "");
      s.write(`GET /x HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    });
    s.on("data", (d: Buffer) => {
      raw += d.toString("latin1");
    });
    s.on("error", reject);
    s.on("close", () => {
      const at = raw.indexOf("\r\n\r\n");
      if (at < 0) return reject(new Error(`no response (${raw.length} bytes)`));
      resolve({ cn, status: Number(raw.slice(9, 12)), body: raw.slice(at + 4) });
    });
  });
}

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  echo = startEchoServer({ service: "echo" });
});

afterAll(async () => {
  await echo.stop();
  tlsBackend.stop(true);
  if (restoreSink) setLogSink(restoreSink);
});

describe("a port shared by TLS passthrough and HTTPS (--enable-ssl-passthrough)", () => {
  test("the SNI picks: a TLSRoute's name is passed through, any other is terminated and routed", async () => {
    const gw = new GatewayServer({ bind: "127.0.0.1", front: "raw", sharedTlsPorts: true });
    try {
      const port = await freePort();
      await gw.apply(sharedModel(port));
      const passed = await get(port, "pass.example");
      expect([passed.cn, passed.status, passed.body]).toEqual(["pass.example", 200, "passed through"]);
      const terminated = await get(port, "term.example");
      expect([terminated.cn, terminated.status]).toEqual(["term.example", 200]);
      expect(JSON.parse(terminated.body)).toMatchObject({
        host: "term.example",
        path: "/x",
        service: "echo",
      });
      // Several at once, both kinds, on the one port.
      const mixed = await Promise.all(
        Array.from({ length: 10 }, (_, i) => get(port, i % 2 === 0 ? "pass.example" : "term.example")),
      );
      expect(mixed.map((r) => r.status)).toEqual(Array(10).fill(200));
      // A certificate rotation of the HTTPS side keeps the sharing.
      const next = sharedModel(port);
      const rotated = selfSigned("term.example");
      const https = {
        ...(next.listeners[0] as (typeof next.listeners)[0]),
        tls: { certificates: [rotated] },
      };
      await gw.apply({ ...next, listeners: [https] });
      expect((await get(port, "term.example")).status).toBe(200);
      expect((await get(port, "pass.example")).body).toBe("passed through");
    } finally {
      await gw.stop(true);
    }
  });

  test.each<[FrontKind, boolean]>([
    ["raw", false],
    ["bun", true],
  ])(
    "--front %s with sharing %p: the passthrough listener is not served, HTTPS keeps the port",
    async (front, sharedTlsPorts) => {
      const gw = new GatewayServer({ bind: "127.0.0.1", front, sharedTlsPorts });
      try {
        const port = await freePort();
        await gw.apply(sharedModel(port));
        expect(gw.ports().map((p) => p.listener)).toEqual(["test/https"]);
        const res = await get(port, "pass.example");
        // Terminated by the gateway (its fallback certificate), then no virtual host for that name.
        expect([res.cn, res.status]).toEqual(["term.example", 404]);
      } finally {
        await gw.stop(true);
      }
    },
  );
});
