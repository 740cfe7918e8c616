/**
 * The client-certificate hook of HTTPS listeners (a model listener's `tls.clientValidation`), end to end
 * through GatewayServer on both fronts: with AllowValidOnly only a client certificate from the CA completes
 * the handshake (none, another CA's and an expired one fail), with AllowInsecureFallback every client is
 * served; on the fast path and on the relayed one (a route with a mirror filter, served by the listener
 * app) the upstream never sees the front's own relay fields. A new CA bundle is taken without a restart
 * (the raw front swaps its contexts in place, Bun.serve binds a new server beside the old). `--front bun
 * --http2`, whose HTTP/2 listener does not check client certificates, does not open such a listener.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:tls";
import type { ClientCertificateValidation, GatewayModel } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import { clientCertificate, selfSigned, testAuthority } from "../../../src/proxy/testing/certs.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { type EchoServer, startEchoServer } from "../../helpers/echo-server.ts";
import { forEachFront } from "../../helpers/fronts.ts";

const host = "mtls.example";
const serverCert = selfSigned(host);
const ca = testAuthority("clients");
const alice = clientCertificate(ca, "alice");
const stranger = clientCertificate(testAuthority("elsewhere"), "mallory");
const expired = clientCertificate(ca, "old", { expired: true });
let echo: EchoServer;
let restoreSink: ((line: string) => void) | undefined;

function mtlsModel(mode: ClientCertificateValidation["mode"], caPem = ca.certPem): GatewayModel {
  const mirror = { kind: "RequestMirror", backendId: "echo", percent: 100 } as const;
  return model(
    [
      listener(
        [
          vhost(host, [
            route("fast", match("/fast"), forwardTo("echo")),
            route("slow", match("/slow"), forwardTo("echo"), { filters: [mirror] }),
          ]),
        ],
        {
          name: "test/https",
          protocol: "HTTPS",
          tls: { certificates: [serverCert], clientValidation: { caPem, mode } },
        },
      ),
    ],
    [backend("echo", [echo.port])],
  );
}

/** GET `path` with the client certificate `cert` (none when undefined): status and echoed header names. */
function get(
  port: number,
  path: string,
  cert?: { certPem: string; keyPem: string },
): Promise<{ status: number; headers: string[] } | { error: string }> {
  return new Promise((resolve) => {
    let raw = "";
    const s = connect(
      {
        host: "127.0.0.1",
        port,
        servername: host,
        rejectUnauthorized: false,
        ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
      },
      () => s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    s.on("data", (d: Buffer) => {
      raw += d.toString("latin1");
    });
    s.on("error", (err) => resolve({ error: err.message }));
    s.on("close", () => {
      const at = raw.indexOf("\r\n\r\n");
      if (at < 0) return resolve({ error: "closed without a response" });
      const body = JSON.parse(raw.slice(at + 4)) as { headers: Record<string, string[]> };
      resolve({
        status: Number(raw.slice(9, 12)),
        headers: Object.keys(body.headers).map((n) => n.toLowerCase()),
      });
    });
  });
}

beforeAll(() => {
  restoreSink = setLogSink(() => {});
  echo = startEchoServer({ service: "echo" });
});

afterAll(async () => {
  await echo.stop();
  if (restoreSink) setLogSink(restoreSink);
});

forEachFront("client certificates on HTTPS listeners", (front) => {
  test("AllowValidOnly: only a certificate from the CA is served, on the fast and the relayed path", async () => {
    const gw = new GatewayServer({ bind: "127.0.0.1", front });
    try {
      await gw.apply(mtlsModel("AllowValidOnly"));
      const port = gw.ports()[0]?.port ?? 0;
      for (const path of ["/fast", "/slow"]) {
        const ok = await get(port, path, alice);
        expect(ok).toMatchObject({ status: 200 });
        if ("headers" in ok) expect(ok.headers.filter((n) => n.startsWith("x-gatehouse"))).toEqual([]);
        expect(await get(port, path)).toHaveProperty("error");
        expect(await get(port, path, stranger)).toHaveProperty("error");
        expect(await get(port, path, expired)).toHaveProperty("error");
      }
    } finally {
      await gw.stop(true);
    }
  });

  test("AllowInsecureFallback: every client is served", async () => {
    const gw = new GatewayServer({ bind: "127.0.0.1", front });
    try {
      await gw.apply(mtlsModel("AllowInsecureFallback"));
      const port = gw.ports()[0]?.port ?? 0;
      for (const cert of [alice, stranger, expired, undefined])
        expect(await get(port, "/slow", cert)).toMatchObject({ status: 200 });
    } finally {
      await gw.stop(true);
    }
  });

  test("a client's long chain stays out of a relayed request on a route that checks no certificate", async () => {
    const gw = new GatewayServer({ bind: "127.0.0.1", front });
    // 40 more certificates (some 30 KB as base64): past any head limit if copied into the relayed head.
    const padded = { ...stranger, certPem: stranger.certPem + ca.certPem.repeat(40) };
    try {
      await gw.apply(mtlsModel("AllowInsecureFallback"));
      const port = gw.ports()[0]?.port ?? 0;
      expect(await get(port, "/slow", padded)).toMatchObject({ status: 200 });
    } finally {
      await gw.stop(true);
    }
  });

  test("a new CA bundle is taken on the same port without a restart", async () => {
    const gw = new GatewayServer({ bind: "127.0.0.1", front });
    const next = testAuthority("clients-2026");
    const bob = clientCertificate(next, "bob");
    try {
      await gw.apply(mtlsModel("AllowValidOnly"));
      const port = gw.ports()[0]?.port ?? 0;
      expect(await get(port, "/fast", alice)).toMatchObject({ status: 200 });
      expect(await get(port, "/fast", bob)).toHaveProperty("error");
      await gw.apply(mtlsModel("AllowValidOnly", next.certPem));
      expect(gw.ports()[0]?.port).toBe(port);
      expect(await get(port, "/fast", bob)).toMatchObject({ status: 200 });
      expect(await get(port, "/fast", alice)).toHaveProperty("error");
      // Both CAs in one bundle: both clients.
      await gw.apply(mtlsModel("AllowValidOnly", `${ca.certPem}\n${next.certPem}`));
      expect(await get(port, "/fast", alice)).toMatchObject({ status: 200 });
      expect(await get(port, "/fast", bob)).toMatchObject({ status: 200 });
    } finally {
      await gw.stop(true);
    }
  });
});

test("--front bun --http2 does not check client certificates: the listener is not opened", async () => {
  const gw = new GatewayServer({ bind: "127.0.0.1", front: "bun", http2: true });
  try {
    await gw.apply(mtlsModel("AllowValidOnly"));
    expect(gw.ports()).toEqual([]);
  } finally {
    await gw.stop(true);
  }
});
