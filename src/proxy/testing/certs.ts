/**
 * Self-signed certificates for HTTPS listener tests, made with the openssl binary (P-256, one day).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import type { TLSCertificate } from "../../model/index.ts";

/** A certificate for `name` (CN and DNS SAN). */
export function selfSigned(name: string): TLSCertificate {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-cert-"));
  try {
    const key = join(dir, "tls.key");
    const crt = join(dir, "tls.crt");
    const r = Bun.spawnSync(
      ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        .concat(["-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`, "-days", "1"])
        .concat(["-keyout", key, "-out", crt]),
    );
    if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    return {
      source: { kind: "Secret", namespace: "test", name },
      hostnames: [name],
      certPem: readFileSync(crt, "utf8"),
      keyPem: readFileSync(key, "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The CN of the certificate a TLS server presents for `servername`. */
export function peerCommonName(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      resolve(String(s.getPeerCertificate().subject?.CN));
      s.end();
    });
    s.on("error", reject);
  });
}
