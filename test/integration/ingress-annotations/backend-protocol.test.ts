/**
 * ingress-nginx's `backend-protocol` and `proxy-ssl-*`, live on both fronts. The backend is a TLS echo
 * whose certificate a private CA signed for `tls-app.shop.svc` and `api.internal.test` (the Service's
 * cluster DNS name and another), asking for a client certificate: HTTPS with proxy-ssl-secret reaches it,
 * verified, with SNI and the client certificate; proxy-ssl-name changes the name verified and sent;
 * without the Secret (public roots) or with another CA it is 502, never unverified; a Secret without
 * ca.crt or a malformed reference is 503, never cleartext; FCGI is 503; GRPC speaks h2c.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Http2Server } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { clientCertificate, serverCertificate, testAuthority } from "../../../src/proxy/testing/certs.ts";
import { annotatedIngressYaml, serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";
import { startTlsEchoServer, type TlsEchoServer } from "../../helpers/tls-echo-server.ts";

const ca = testAuthority("backend-ca");
const other = testAuthority("other-ca");
const server = serverCertificate(ca, { dns: ["tls-app.shop.svc", "api.internal.test"] });
const client = clientCertificate(ca, "gatehouse");

const indent = (pem: string) => pem.trimEnd().replace(/^/gm, "    ");
const secret = (name: string, entries: Record<string, string>) =>
  `apiVersion: v1\nkind: Secret\nmetadata: { name: ${name}, namespace: shop }\ntype: Opaque\nstringData:\n${Object.entries(
    entries,
  )
    .map(([k, v]) => `  ${k}: |\n${indent(v)}`)
    .join("\n")}\n`;

/** HTTPS to api.internal.test with the CA and client certificate, offering `protocols`. */
const named = (protocols: string) => ({
  "backend-protocol": "HTTPS",
  "proxy-ssl-secret": "shop/backend-tls",
  "proxy-ssl-name": "api.internal.test",
  "proxy-ssl-protocols": protocols,
});

const ingresses: Record<string, { service: string; annotations: Record<string, string> }> = {
  "verified.test": {
    service: "tls-app",
    annotations: {
      "backend-protocol": "HTTPS",
      "proxy-ssl-secret": "shop/backend-tls",
      "proxy-ssl-server-name": "off",
    },
  },
  "named.test": {
    service: "tls-app",
    annotations: {
      "backend-protocol": "https",
      "proxy-ssl-secret": "shop/backend-tls",
      "proxy-ssl-name": "api.internal.test",
    },
  },
  "public-roots.test": {
    service: "tls-app",
    annotations: { "backend-protocol": "HTTPS", "proxy-ssl-verify": "off" },
  },
  "tls12.test": {
    service: "tls12-app",
    annotations: { ...named("TLSv1.2") },
  },
  "tls13-only.test": {
    service: "tls12-app",
    annotations: { ...named("TLSv1.3") },
  },
  "other-ca.test": {
    service: "tls-app",
    annotations: { "backend-protocol": "HTTPS", "proxy-ssl-secret": "shop/other-ca" },
  },
  "wrong-name.test": {
    service: "tls-app",
    annotations: {
      "backend-protocol": "HTTPS",
      "proxy-ssl-secret": "shop/backend-tls",
      "proxy-ssl-name": "elsewhere.test",
    },
  },
  "no-ca.test": {
    service: "tls-app",
    annotations: { "backend-protocol": "HTTPS", "proxy-ssl-secret": "shop/client-only" },
  },
  "bad-ref.test": {
    service: "tls-app",
    annotations: { "backend-protocol": "HTTPS", "proxy-ssl-secret": "a/b/c" },
  },
  "fcgi.test": { service: "tls-app", annotations: { "backend-protocol": "FCGI" } },
  "grpc.test": { service: "h2c-app", annotations: { "backend-protocol": "GRPC" } },
};

forEachFront("backend-protocol and proxy-ssl-*", (front) => {
  let tlsBackend: TlsEchoServer;
  let tls12Backend: TlsEchoServer;
  let h2cBackend: Http2Server;
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    tlsBackend = await startTlsEchoServer({ ...server, clientCA: ca.certPem, service: "tls-app" });
    tls12Backend = await startTlsEchoServer({ ...server, clientCA: ca.certPem, maxVersion: "TLSv1.2" });
    h2cBackend = createServer((req, res) => res.end(JSON.stringify({ httpVersion: req.httpVersion })));
    await new Promise<void>((resolve) => h2cBackend.listen(0, "127.0.0.1", resolve));
    const h2cPort = (h2cBackend.address() as { port: number }).port;
    dir = await mkdtemp(join(tmpdir(), "gatehouse-backend-protocol-"));
    const docs = [
      serviceYaml("tls-app", "shop", tlsBackend.port),
      serviceYaml("h2c-app", "shop", h2cPort),
      serviceYaml("tls12-app", "shop", tls12Backend.port),
      secret("backend-tls", { "ca.crt": ca.certPem, "tls.crt": client.certPem, "tls.key": client.keyPem }),
      secret("other-ca", { "ca.crt": other.certPem }),
      secret("client-only", { "tls.crt": client.certPem, "tls.key": client.keyPem }),
      ...Object.entries(ingresses).map(([host, i]) =>
        annotatedIngressYaml({ name: host.replace(/\./g, "-"), namespace: "shop", host, ...i }),
      ),
    ];
    await writeFile(join(dir, "all.yaml"), docs.join("\n---\n"));
    ({ gw, port } = await startTestGateway(["--dir", dir], ["--front", front]));
  });

  afterAll(async () => {
    await gw?.stop({ delayMs: 0 });
    await tlsBackend?.stop();
    await tls12Backend?.stop();
    h2cBackend?.close();
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  const get = async (host: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/x`, { headers: { host } });
    return { status: res.status, body: await res.text() };
  };

  test("HTTPS with proxy-ssl-secret: verified by its ca.crt, SNI the Service's DNS name (proxy-ssl-server-name off or not), its client certificate presented", async () => {
    const res = await get("verified.test");
    expect(res.status).toBe(200);
    const tls = JSON.parse(res.body).tls;
    expect(tls.serverName).toBe("tls-app.shop.svc");
    expect(tls.peerCertificates).toHaveLength(1);
  });

  test("proxy-ssl-name: that name is verified and sent as SNI (the value's case does not matter)", async () => {
    const res = await get("named.test");
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).tls.serverName).toBe("api.internal.test");
  });

  test("proxy-ssl-protocols: TLSv1.2 reaches a TLS 1.2 backend, TLSv1.3 alone does not (502)", async () => {
    const res = await get("tls12.test");
    expect([res.status, JSON.parse(res.body).tls.version]).toEqual([200, "TLSv1.2"]);
    expect((await get("tls13-only.test")).status).toBe(502);
  });

  test("a private CA's certificate is refused against the public roots (proxy-ssl-verify off or not), another CA or another name: 502", async () => {
    for (const host of ["public-roots.test", "other-ca.test", "wrong-name.test"])
      expect([host, (await get(host)).status]).toEqual([host, 502]);
  });

  test("a Secret without ca.crt, a malformed reference, FCGI: 503, the backend never reached", async () => {
    const before = tlsBackend.requests;
    for (const host of ["no-ca.test", "bad-ref.test", "fcgi.test"])
      expect([host, (await get(host)).status]).toEqual([host, 503]);
    expect(tlsBackend.requests).toBe(before);
  });

  test("GRPC: the backend is spoken to with h2c", async () => {
    const res = await get("grpc.test");
    expect([res.status, JSON.parse(res.body).httpVersion]).toEqual([200, "2.0"]);
  });
});
