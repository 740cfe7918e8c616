import { describe, expect, test } from "bun:test";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { makeCertificates } from "./certificates.ts";
import type { CertificateSpec } from "./data.ts";

const ca: CertificateSpec = {
  ref: "infra/test-ca",
  kind: "ConfigMap",
  subject: { CN: "gatewayapi", O: ["Kubernetes Gateway API"], C: ["US"] },
  serialNumber: 2024,
  isCA: true,
  keyUsage: ["DigitalSignature", "CertSign"],
  extKeyUsage: ["ClientAuth", "ServerAuth"],
  creationOrder: 1,
};
const leaf = (over: Partial<CertificateSpec>): CertificateSpec => ({
  ref: "infra/leaf",
  kind: "Secret",
  issuer: "self",
  subject: { CN: "default", O: ["Acme Co"] },
  serialNumber: "random 128-bit",
  isCA: false,
  keyUsage: ["KeyEncipherment", "DigitalSignature"],
  extKeyUsage: ["ServerAuth"],
  creationOrder: 2,
  ...over,
});

/** openssl's view of the extensions Node does not parse (key usage bits, basic constraints). */
async function text(pem: string): Promise<string> {
  const p = Bun.spawn(["openssl", "x509", "-noout", "-text"], { stdin: new Blob([pem]), stdout: "pipe" });
  return new Response(p.stdout).text();
}

describe("makeCertificates", async () => {
  const made = await makeCertificates([
    leaf({
      ref: "infra/server",
      issuer: "infra/test-ca",
      creationOrder: 3,
      dnsNames: ["abc.example.com"],
      uriSANs: ["spiffe://abc.example.com/test-identity"],
    }),
    leaf({ ref: "infra/client", issuer: "infra/test-ca", creationOrder: 4, extKeyUsage: ["ClientAuth"] }),
    leaf({ ref: "infra/self", dnsNames: ["*.org"], uriSANs: ["*"] }),
    ca,
  ]);
  const get = (ref: string) => {
    const c = made.get(ref);
    if (!c) throw new Error(`${ref} not made`);
    return c;
  };

  test("a CA: subject in Go's order, serial 2024, CA:TRUE, DigitalSignature+CertSign, both EKUs", async () => {
    const c = get("infra/test-ca");
    const x = new X509Certificate(c.certPem);
    expect(x.subject.split("\n")).toEqual(["C=US", "O=Kubernetes Gateway API", "CN=gatewayapi"]);
    expect(x.issuer).toBe(x.subject);
    expect(x.ca).toBe(true);
    expect(Number.parseInt(x.serialNumber, 16)).toBe(2024);
    expect(x.keyUsage?.sort()).toEqual(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]);
    const t = await text(c.certPem);
    expect(t).toContain("Digital Signature, Certificate Sign");
    expect(c.object).toMatchObject({ kind: "ConfigMap", data: { "ca.crt": c.certPem, "key.crt": c.keyPem } });
  });

  test("keys are RSA 2048 in PKCS#1 PEM", () => {
    for (const c of made.values()) {
      expect(c.keyPem).toStartWith("-----BEGIN RSA PRIVATE KEY-----");
      expect(createPrivateKey(c.keyPem).asymmetricKeyDetails?.modulusLength).toBe(2048);
    }
  });

  test("a server leaf signed by the CA: SANs DNS and URI, ServerAuth, not a CA, 128-bit serial", async () => {
    const c = get("infra/server");
    const x = new X509Certificate(c.certPem);
    const issuer = new X509Certificate(get("infra/test-ca").certPem);
    expect(x.checkIssued(issuer)).toBe(true);
    expect(x.verify(issuer.publicKey)).toBe(true);
    expect(x.subject.split("\n")).toEqual(["O=Acme Co", "CN=default"]);
    expect(x.subjectAltName).toBe("DNS:abc.example.com, URI:spiffe://abc.example.com/test-identity");
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(x.ca).toBe(false);
    expect(x.serialNumber.length).toBeGreaterThan(20);
    expect(await text(c.certPem)).toContain("Digital Signature, Key Encipherment");
    const data = c.object.data as Record<string, string>;
    expect(c.object.type).toBe("kubernetes.io/tls");
    expect(Buffer.from(data["tls.crt"] as string, "base64").toString()).toBe(c.certPem);
  });

  test("a client leaf has ClientAuth and no SANs", () => {
    const x = new X509Certificate(get("infra/client").certPem);
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(x.subjectAltName).toBeUndefined();
  });

  test("a self-signed leaf: `*` is a URI SAN, as upstream's host rule makes it", () => {
    const x = new X509Certificate(get("infra/self").certPem);
    expect(x.issuer).toBe(x.subject);
    expect(x.subjectAltName).toBe("DNS:*.org, URI:*");
  });

  test("an issuer missing from the list is an error", async () => {
    await expect(makeCertificates([leaf({ issuer: "infra/nowhere" })])).rejects.toThrow(/issuer/);
  });
});
