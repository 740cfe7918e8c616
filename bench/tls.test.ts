import { expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { manifests, nginxConf, routeSet } from "./routes.ts";
import {
  BENCH_TLS12_CIPHERS,
  makeCertificate,
  nginxTlsDirectives,
  parseSClient,
  selfSignedArgs,
  tlsSecretYaml,
} from "./tls.ts";

const files = { certFile: "/w/tls.crt", keyFile: "/w/tls.key" };

test("selfSignedArgs: EC P-256, DNS and IP names", () => {
  const args = selfSignedArgs("/w/k", "/w/c", ["*.bench.test", "127.0.0.1"]);
  expect(args.slice(0, 6)).toEqual([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
  ]);
  expect(args).toContain("subjectAltName=DNS:*.bench.test,IP:127.0.0.1");
  expect(args).toContain("/CN=*.bench.test");
  expect(args.slice(-4)).toEqual(["-keyout", "/w/k", "-out", "/w/c"]);
});

test("nginxTlsDirectives: TLS 1.2/1.3, Gatehouse's AEAD suites, tickets like BoringSSL", () => {
  const text = nginxTlsDirectives(files);
  expect(text).toContain("  ssl_certificate /w/tls.crt;\n");
  expect(text).toContain("  ssl_certificate_key /w/tls.key;\n");
  expect(text).toContain("  ssl_protocols TLSv1.2 TLSv1.3;\n");
  expect(text).toContain(`  ssl_ciphers ${BENCH_TLS12_CIPHERS};\n`);
  expect(text).toContain("  ssl_session_tickets on;\n");
  expect(text).toContain("  ssl_session_cache off;\n");
  // AEAD with forward secrecy only: no CBC, no static RSA key exchange.
  for (const suite of BENCH_TLS12_CIPHERS.split(":"))
    expect(suite).toMatch(/^ECDHE-.*(GCM|CHACHA20-POLY1305)/);
});

test("nginxConf with tls: every server listens with ssl, upstream keep-alive kept", () => {
  const set = routeSet(2, 1);
  const conf = nginxConf(set, { port: 9443, upstreamPort: 9000, workers: 2, prefix: "/p", tls: files });
  expect(conf.match(/listen 127\.0\.0\.1:9443 ssl/g)?.length).toBe(3);
  expect(conf).not.toMatch(/listen 127\.0\.0\.1:9443;/);
  expect(conf).toContain("keepalive 128;");
  expect(conf).toContain("ssl_protocols TLSv1.2 TLSv1.3;");
  expect(conf).toContain("worker_processes 2;");
  const plain = nginxConf(set, { port: 9080, upstreamPort: 9000, workers: 1, prefix: "/p" });
  expect(plain).not.toContain("ssl");
});

test("manifests with a TLS Secret: each Ingress names it for its own host, HTTPRoutes unchanged", () => {
  const docs = parseAllDocuments(manifests(routeSet(2, 1), 9000, 9080, "bench-tls")).map((d) => d.toJS());
  const ingress = docs.find((d) => d.kind === "Ingress");
  expect(ingress.spec.tls).toEqual([{ hosts: ["host-0.bench.test"], secretName: "bench-tls" }]);
  expect(docs.find((d) => d.kind === "HTTPRoute").spec.tls).toBeUndefined();
  const plain = parseAllDocuments(manifests(routeSet(2, 1), 9000, 9080)).map((d) => d.toJS());
  expect(plain.find((d) => d.kind === "Ingress").spec.tls).toBeUndefined();
});

test("tlsSecretYaml: a kubernetes.io/tls Secret with both PEMs in base64", () => {
  const s = parse(tlsSecretYaml("bench", "bench-tls", { certPem: "CERT", keyPem: "KEY" }));
  expect(s).toEqual({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "bench-tls", namespace: "bench" },
    type: "kubernetes.io/tls",
    data: { "tls.crt": "Q0VSVA==", "tls.key": "S0VZ" },
  });
});

test("parseSClient reads the negotiated suite, group, signature and resumption", () => {
  const out = `CONNECTED(00000003)
Peer signature type: ECDSA
Server Temp Key: X25519, 253 bits
---
New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384
`;
  expect(parseSClient(out)).toEqual({
    negotiated: "TLSv1.3 TLS_AES_256_GCM_SHA384",
    group: "X25519",
    signature: "ECDSA",
    reused: false,
  });
  expect(parseSClient("Reused, TLSv1.3, Cipher is TLS_AES_128_GCM_SHA256\n").reused).toBe(true);
  expect(() => parseSClient("connect: Connection refused")).toThrow(/no TLS handshake/);
});

test.skipIf(!Bun.which("openssl") || !Bun.which("nginx"))(
  "the generated certificate and TLS config are ones nginx accepts (nginx -t)",
  async () => {
    const dir = await mkdtemp(join(tmpdir(), "bench-tls-"));
    try {
      const cert = await makeCertificate(dir, ["*.bench.test", "127.0.0.1"]);
      expect(cert.certPem).toContain("BEGIN CERTIFICATE");
      expect(cert.keyPem).toContain("PRIVATE KEY");
      const conf = join(dir, "nginx.conf");
      await Bun.write(
        conf,
        nginxConf(routeSet(2, 1), { port: 1, upstreamPort: 2, workers: 1, prefix: dir, tls: cert }),
      );
      const r = Bun.spawnSync(["nginx", "-t", "-p", dir, "-c", conf], { stdout: "pipe", stderr: "pipe" });
      expect(r.stderr.toString()).toContain("test is successful");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
