/**
 * ingress-nginx's `ssl-passthrough`, live: with `--enable-ssl-passthrough` a TLS client naming the host in
 * its SNI reaches the backend's own TLS (it sees the backend's certificate: the gateway terminates
 * nothing); a name no Ingress passes through finds no route. Without the flag nothing is passed through.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { setLogSink } from "../../../src/observability/logger.ts";
import { selfSigned } from "../../../src/proxy/testing/certs.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";
import { forEachFront } from "../../helpers/fronts.ts";
import { freePort } from "../../helpers/ports.ts";
import { startTestGateway } from "../../helpers/test-gateway.ts";

const cert = selfSigned("secure.test");

const manifest = (port: number) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  namespace: shop
  annotations: { nginx.ingress.kubernetes.io/ssl-passthrough: "true" }
spec:
  ingressClassName: gatehouse
  rules:
    - host: secure.test
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: tls-app, port: { number: 80 } } } }
---
${serviceYaml("tls-app", "shop", port)}`;

/** One HTTPS GET with `servername` as SNI: the peer certificate's subject CN and the body, or the error. */
function tlsGet(port: number, servername: string): Promise<{ cn?: string; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      const cn = s.getPeerCertificate().subject?.CN;
      s.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
      let text = "";
      s.on("data", (d: Buffer) => {
        text += d.toString();
      });
      s.on("end", () => resolve({ cn: String(cn), body: text.split("\r\n\r\n")[1] ?? "" }));
    });
    s.on("error", (err) => resolve({ error: err.message }));
    setTimeout(() => {
      s.destroy();
      resolve({ error: "timeout" });
    }, 5000);
  });
}

forEachFront("ssl-passthrough on an Ingress", (front) => {
  const backend = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: cert.certPem, key: cert.keyPem },
    fetch: () => new Response("from the backend's own TLS"),
  });
  let dir: string;
  const gateways: RunningGateway[] = [];
  let restore: ((line: string) => void) | undefined;

  beforeAll(async () => {
    restore = setLogSink(() => {});
    dir = await mkdtemp(join(tmpdir(), "gatehouse-passthrough-"));
    await writeFile(join(dir, "all.yaml"), manifest(backend.port as number));
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop({ delayMs: 0 })));
    backend.stop(true);
    await rm(dir, { recursive: true, force: true });
    if (restore) setLogSink(restore);
  });

  async function start(...extra: string[]): Promise<number> {
    const httpsPort = await freePort();
    const { gw } = await startTestGateway(
      ["--dir", dir],
      ["--front", front, "--https-port", String(httpsPort), ...extra],
    );
    gateways.push(gw);
    return httpsPort;
  }

  test("with --enable-ssl-passthrough: the SNI name reaches the backend's TLS, unopened", async () => {
    const port = await start("--enable-ssl-passthrough", "true");
    const got = await tlsGet(port, "secure.test");
    expect(got).toEqual({ cn: "secure.test", body: "from the backend's own TLS" });
    expect((await tlsGet(port, "other.test")).body ?? "").not.toContain("backend");
  });

  test("without the flag nothing is passed through (as in ingress-nginx)", async () => {
    const port = await start();
    const got = await tlsGet(port, "secure.test");
    expect(got.cn).not.toBe("secure.test");
  });
});
