import { afterAll, describe, expect, test } from "bun:test";
import { request } from "node:https";
import { makeCertificates } from "../conformance/rest/certificates.ts";
import type { CertificateSpec } from "../conformance/rest/data.ts";
import { startTlsEchoServer } from "./tls-echo-server.ts";

const ca = (ref: string, creationOrder: number): CertificateSpec => ({
  ref,
  kind: "ConfigMap",
  subject: { CN: "gatewayapi" },
  serialNumber: 2024,
  isCA: true,
  keyUsage: ["DigitalSignature", "CertSign"],
  extKeyUsage: ["ClientAuth", "ServerAuth"],
  creationOrder,
});
const leaf = (ref: string, issuer: string, creationOrder: number, server: boolean): CertificateSpec => ({
  ref,
  kind: "Secret",
  issuer,
  subject: { CN: "default" },
  serialNumber: "random 128-bit",
  isCA: false,
  keyUsage: ["KeyEncipherment", "DigitalSignature"],
  extKeyUsage: [server ? "ServerAuth" : "ClientAuth"],
  ...(server ? { dnsNames: ["abc.example.com"] } : {}),
  creationOrder,
});

function get(port: number, ca: string, client?: { certPem: string; keyPem: string }) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/hello?x=1",
        servername: "abc.example.com",
        headers: { host: "abc.example.com", "x-test": "1" },
        ca,
        agent: false,
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("TLS echo (upstream echo-basic HTTPS port)", async () => {
  const certs = await makeCertificates([
    ca("t/ca", 1),
    leaf("t/server", "t/ca", 2, true),
    leaf("t/client", "t/ca", 3, false),
    ca("t/other-ca", 4),
    leaf("t/stranger", "t/other-ca", 5, false),
  ]);
  const pem = (ref: string) => certs.get(ref) as { certPem: string; keyPem: string };
  const server = await startTlsEchoServer({
    ...pem("t/server"),
    clientCA: pem("t/ca").certPem,
    namespace: "ns",
    pod: "tls-backend-local-0",
  });
  afterAll(() => server.stop());

  test("echoes the request, the pod and the TLS state: SNI, version, no peer certificate", async () => {
    const { status, body } = await get(server.port, pem("t/ca").certPem);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      path: "/hello?x=1",
      host: "abc.example.com",
      method: "GET",
      namespace: "ns",
    });
    expect(body.headers).toMatchObject({ "X-Test": ["1"] });
    const tls = body.tls as Record<string, unknown>;
    expect(tls.serverName).toBe("abc.example.com");
    expect(tls.version).toMatch(/^TLSv1\.[23]$/);
    expect(tls.peerCertificates).toEqual([]);
    expect(tls.cipherSuite).not.toBe("");
  });

  test("a client certificate the CA signed is echoed as Go's pem.Encode writes it", async () => {
    const { body } = await get(server.port, pem("t/ca").certPem, pem("t/client"));
    expect((body.tls as { peerCertificates: string[] }).peerCertificates).toEqual([pem("t/client").certPem]);
  });

  test("a client certificate from another CA ends the connection (VerifyClientCertIfGiven)", async () => {
    await expect(get(server.port, pem("t/ca").certPem, pem("t/stranger"))).rejects.toThrow();
    expect(server.requests).toBe(2);
  });
});
