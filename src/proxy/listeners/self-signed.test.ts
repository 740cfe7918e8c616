import { describe, expect, test } from "bun:test";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import { selfSignedCertificate } from "./self-signed.ts";

describe("selfSignedCertificate", () => {
  const notBefore = new Date("2026-01-02T03:04:05Z");
  const pems = selfSignedCertificate("gatehouse.invalid", 3650, notBefore);
  const cert = new X509Certificate(pems.certPem);

  test("node parses it: subject, issuer, SAN, validity, a leaf (CA:FALSE)", () => {
    expect(cert.subject).toBe("O=Gatehouse\nCN=gatehouse.invalid");
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.subjectAltName).toBe("DNS:gatehouse.invalid");
    expect([new Date(cert.validFrom).toISOString(), new Date(cert.validTo).toISOString()]).toEqual([
      "2026-01-02T03:04:05.000Z",
      "2035-12-31T03:04:05.000Z",
    ]);
    expect(cert.ca).toBe(false);
  });

  test("its signature verifies with its own key, which the private key matches", () => {
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(pems.keyPem))).toBe(true);
  });

  test("the openssl CLI reads it the same way (an independent DER parser)", () => {
    const r = Bun.spawnSync(["openssl", "x509", "-noout", "-text"], { stdin: Buffer.from(pems.certPem) });
    const text = r.stdout.toString();
    expect(r.exitCode).toBe(0);
    expect(text).toContain("Version: 3 (0x2)");
    expect(text).toContain("Signature Algorithm: ecdsa-with-SHA256");
    expect(text).toContain("DNS:gatehouse.invalid");
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
  });

  test("a dated validity past 2049 is written as GeneralizedTime and read back", () => {
    const late = new X509Certificate(
      selfSignedCertificate("x.test", 1, new Date("2051-06-01T00:00:00Z")).certPem,
    );
    expect(new Date(late.validTo).toISOString()).toBe("2051-06-02T00:00:00.000Z");
  });

  test("a TLS server serves it: a client sees its CN", async () => {
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: pems.certPem, key: pems.keyPem },
      fetch: () => new Response("ok"),
    });
    try {
      const cn = await new Promise<string>((resolve, reject) => {
        const s = connect(
          { host: "127.0.0.1", port: server.port as number, rejectUnauthorized: false },
          () => {
            resolve(String(s.getPeerCertificate().subject?.CN));
            s.end();
          },
        );
        s.on("error", reject);
      });
      expect(cn).toBe("gatehouse.invalid");
    } finally {
      server.stop(true);
    }
  });

  test("every call makes a new key and serial", () => {
    const other = selfSignedCertificate("gatehouse.invalid", 1);
    expect(other.keyPem).not.toBe(pems.keyPem);
    expect(new X509Certificate(other.certPem).serialNumber).not.toBe(cert.serialNumber);
  });
});
