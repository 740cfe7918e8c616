/**
 * TLS to backends (model Backend.tls: BackendTLSPolicy, ingress-nginx backend-protocol HTTPS/GRPCS), on
 * both fronts, against real TLS servers with certificates from a test CA: the SNI sent, verification of
 * the chain and of the name (or the policy's subjectAltNames), a client certificate presented, TLS
 * versions, keep-alive (no handshake per request), HTTP/2 over TLS and WebSocket over TLS. Every
 * refusal is a 502 and the backend never sees the request; a backend whose TLS cannot be set up is a 503.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Stream } from "node:http2";
import type { BackendTLS } from "../../../src/model/index.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { GatewayServer } from "../../../src/proxy/listeners/server.ts";
import {
  clientCertificate,
  serverCertificate,
  type TestAuthority,
  testAuthority,
} from "../../../src/proxy/testing/certs.ts";
import {
  backend,
  forwardTo,
  listener,
  match,
  model,
  route,
  vhost,
} from "../../../src/proxy/testing/model.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTlsEchoServer, type TlsEchoServer } from "../../helpers/tls-echo-server.ts";

const source = { kind: "BackendTLSPolicy", namespace: "test", name: "tls" } as const;
const NAME = "abc.example.com";
const URI = "spiffe://abc.example.com/test-identity";

let ca: TestAuthority;
let otherCa: TestAuthority;
let good: TlsEchoServer;
let expired: TlsEchoServer;
let tls12: TlsEchoServer;
let wantsClient: TlsEchoServer;
let h2: Http2SecureServer;
let h2Port: number;
let wss: Bun.Server<undefined>;
let client: { certPem: string; keyPem: string };

beforeAll(async () => {
  ca = testAuthority("backend-ca");
  otherCa = testAuthority("other-ca");
  const leaf = serverCertificate(ca, { dns: [NAME, "other.example.com"], uri: [URI] });
  client = clientCertificate(ca, "gateway");
  good = await startTlsEchoServer({ ...leaf, pod: "good" });
  expired = await startTlsEchoServer({ ...serverCertificate(ca, { dns: [NAME] }, { expired: true }) });
  tls12 = await startTlsEchoServer({ ...leaf, maxVersion: "TLSv1.2" });
  wantsClient = await startTlsEchoServer({ ...leaf, clientCA: ca.certPem, pod: "mtls" });
  h2 = createSecureServer({ cert: leaf.certPem, key: leaf.keyPem, allowHTTP1: false });
  h2.on("stream", (stream: ServerHttp2Stream, headers) => {
    const socket = stream.session?.socket as { servername?: string; alpnProtocol?: string } | undefined;
    stream.respond({ ":status": 200, "content-type": "application/json" });
    stream.end(
      JSON.stringify({ path: headers[":path"], sni: socket?.servername, alpn: socket?.alpnProtocol }),
    );
  });
  await new Promise<void>((r) => h2.listen(0, "127.0.0.1", () => r()));
  h2Port = (h2.address() as { port: number }).port;
  wss = Bun.serve<undefined>({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: leaf.certPem, key: leaf.keyPem },
    fetch: (req, server) => (server.upgrade(req) ? undefined : new Response("no upgrade", { status: 400 })),
    websocket: { message: (ws, m) => void ws.send(`echo ${String(m)}`) },
  });
});

afterAll(async () => {
  await Promise.all([good.stop(), expired.stop(), tls12.stop(), wantsClient.stop()]);
  h2.close();
  wss.stop(true);
});

const tlsTo = (extra: Partial<BackendTLS> = {}): BackendTLS => ({
  serverName: NAME,
  caPem: ca.certPem,
  source,
  ...extra,
});

forEachFront("TLS to backends", (front) => {
  let gw: GatewayServer;
  let port: number;
  let restoreSink: ((line: string) => void) | undefined;
  const lines: string[] = [];

  beforeAll(async () => {
    restoreSink = setLogSink((l) => void lines.push(l));
    const routes: [string, string][] = [];
    const backends = [
      backend("good", [good.port], { tls: tlsTo() }),
      backend("wrong-name", [good.port], { tls: tlsTo({ serverName: "nope.example.com" }) }),
      backend("wrong-ca", [good.port], { tls: tlsTo({ caPem: otherCa.certPem }) }),
      backend("system-roots", [good.port], { tls: tlsTo({ caPem: undefined }) }),
      backend("expired", [expired.port], { tls: tlsTo() }),
      backend("san-dns", [good.port], {
        tls: tlsTo({
          serverName: "sni.example.org",
          subjectAltNames: [{ type: "Hostname", value: "other.example.com" }],
        }),
      }),
      backend("san-uri", [good.port], {
        tls: tlsTo({ serverName: "sni.example.org", subjectAltNames: [{ type: "URI", value: URI }] }),
      }),
      backend("san-miss", [good.port], {
        tls: tlsTo({
          subjectAltNames: [
            { type: "Hostname", value: "abc.example.org" },
            { type: "URI", value: "spiffe://abc.example.com/other" },
          ],
        }),
      }),
      backend("mtls", [wantsClient.port], {
        tls: tlsTo({ clientCertificate: client }),
      }),
      backend("only-13", [tls12.port], { tls: tlsTo({ versions: { min: "TLSv1.3", max: "TLSv1.3" } }) }),
      backend("up-to-12", [tls12.port], { tls: tlsTo({ versions: { min: "TLSv1.2", max: "TLSv1.2" } }) }),
      backend("invalid", [], { tls: tlsTo(), problem: "InvalidBackendTLS" }),
      backend("h2", [h2Port], { protocol: "h2c", tls: tlsTo() }),
      backend("h2-wrong-ca", [h2Port], { protocol: "h2c", tls: tlsTo({ caPem: otherCa.certPem }) }),
      backend("wss", [wss.port ?? 0], { protocol: "websocket", tls: tlsTo() }),
    ];
    for (const b of backends) routes.push([`/${b.id}/`, b.id]);
    gw = new GatewayServer({ bind: "127.0.0.1", front });
    await gw.apply(
      model(
        [
          listener([
            vhost(
              "*",
              routes.map(([path, id]) => route(`${front}-${id}`, match(path), forwardTo(id))),
            ),
          ]),
        ],
        backends,
      ),
    );
    port = gw.ports()[0]?.port ?? 0;
  });

  afterAll(async () => {
    await gw.stop();
    if (restoreSink) setLogSink(restoreSink);
  });

  const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`, { headers: { host: "app.test" } });

  test("HTTP/1.1 in TLS: the SNI is the server name, the path and Host go through", async () => {
    const res = await get("/good/x?y=1");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { path: string; host: string; tls: { serverName: string } };
    expect(body.path).toBe("/good/x?y=1");
    expect(body.host).toBe("app.test");
    expect(body.tls.serverName).toBe(NAME);
  });

  test("connections are kept: 20 requests, not 20 handshakes", async () => {
    const before = good.connections;
    for (let i = 0; i < 20; i++) expect((await get("/good/k")).status).toBe(200);
    expect(good.connections - before).toBeLessThanOrEqual(2);
  });

  test("a certificate for another name, from another CA, not in the public roots, or expired: 502, nothing sent", async () => {
    for (const [path, server] of [
      ["/wrong-name/", good],
      ["/wrong-ca/", good],
      ["/system-roots/", good],
      ["/expired/", expired],
    ] as const) {
      const before = server.requests;
      const res = await get(path);
      expect(`${path} ${res.status}`).toBe(`${path} 502`);
      expect(server.requests).toBe(before);
    }
    expect(
      lines.some(
        (l) =>
          l.includes("upstream TLS failed") &&
          l.includes(`${front}-wrong-name`) &&
          l.includes("expected name nope.example.com"),
      ),
    ).toBe(true);
  });

  test("subjectAltNames replace the name check: a DNS or URI name the certificate has passes, others 502", async () => {
    const dns = await get("/san-dns/");
    expect(dns.status).toBe(200);
    // The SNI stays the policy's hostname.
    expect(((await dns.json()) as { tls: { serverName: string } }).tls.serverName).toBe("sni.example.org");
    expect((await get("/san-uri/")).status).toBe(200);
    const before = good.requests;
    expect((await get("/san-miss/")).status).toBe(502);
    expect(good.requests).toBe(before);
  });

  test("the client certificate is presented to a backend that asks for one", async () => {
    const res = await get("/mtls/");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tls: { peerCertificates: string[] } };
    expect(body.tls.peerCertificates.map((p) => p.trim())).toEqual([client.certPem.trim()]);
  });

  test("TLS versions: a TLS 1.2 backend refused when only 1.3 is allowed, served when 1.2 is", async () => {
    expect((await get("/only-13/")).status).toBe(502);
    const res = await get("/up-to-12/");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tls: { version: string } }).tls.version).toBe("TLSv1.2");
  });

  test("a backend whose TLS cannot be set up answers 503, never cleartext", async () => {
    expect((await get("/invalid/")).status).toBe(503);
  });

  test("HTTP/2 over TLS (ALPN h2) to an HTTP/2-only backend; its certificate verified too", async () => {
    const res = await get("/h2/p");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: "/h2/p", sni: NAME, alpn: "h2" });
    expect((await get("/h2-wrong-ca/")).status).toBe(502);
  });

  test("WebSocket over TLS (wss) to the backend", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/wss/`, { headers: { host: "app.test" } });
    const got = await new Promise<string>((resolve, reject) => {
      ws.onopen = () => ws.send("hi");
      ws.onmessage = (e) => resolve(String(e.data));
      ws.onerror = () => reject(new Error("websocket failed"));
    });
    ws.close();
    expect(got).toBe("echo hi");
  });
});
