/**
 * Certificates for HTTPS tests, made with the openssl binary (P-256, one day): self-signed server
 * certificates, and a CA with client certificates it signed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import type { TLSCertificate } from "../../model/index.ts";

/** A certificate for `name` (CN and DNS SAN). */
export function selfSigned(name: string): TLSCertificate {
  const [certPem, keyPem] = openssl(
    [
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        .concat(["-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`, "-days", "1"])
        .concat(["-keyout", "tls.key", "-out", "tls.crt"]),
    ],
    {},
    ["tls.crt", "tls.key"],
  );
  return {
    source: { kind: "Secret", namespace: "test", name },
    hostnames: [name],
    certPem: certPem as string,
    keyPem: keyPem as string,
  };
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

export interface TestAuthority {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Runs openssl in a private directory holding `files`; returns the named outputs. */
function openssl(steps: string[][], files: Record<string, string>, outputs: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-cert-"));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    for (const step of steps) {
      const r = Bun.spawnSync(["openssl", ...step], { cwd: dir });
      if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    }
    return outputs.map((o) => readFileSync(join(dir, o), "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A CA (P-256, one day) that can sign client certificates. */
export function testAuthority(name: string): TestAuthority {
  const [certPem, keyPem] = openssl(
    [
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        .concat(["-subj", `/CN=${name}`, "-days", "1", "-keyout", "ca.key", "-out", "ca.crt"])
        .concat(["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=keyCertSign"]),
    ],
    {},
    ["ca.crt", "ca.key"],
  );
  return { certPem: certPem as string, keyPem: keyPem as string };
}

/** `openssl ca` settings for a certificate with chosen dates (openssl 3.0's x509 cannot backdate). */
const CA_CONFIG = [
  "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial",
  "default_md = sha256\npolicy = p\nunique_subject = no\nx509_extensions = ext",
  "[p]\ncommonName = supplied\n[ext]\nextendedKeyUsage = clientAuth\n",
].join("\n");

/**
 * A client certificate (ExtKeyUsage clientAuth) for `cn`, signed by `ca`; `expired`: valid for one day
 * in 2020 only.
 */
export function clientCertificate(
  ca: TestAuthority,
  cn: string,
  opts: { expired?: boolean } = {},
): { certPem: string; keyPem: string } {
  const sign = opts.expired
    ? ["ca", "-batch", "-config", "ca.cnf", "-cert", "ca.crt", "-keyfile", "ca.key", "-in", "c.csr"].concat([
        "-out",
        "c.crt",
        "-notext",
        "-startdate",
        "20200101000000Z",
        "-enddate",
        "20200102000000Z",
      ])
    : ["x509", "-req", "-in", "c.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"].concat([
        "-days",
        "1",
        "-out",
        "c.crt",
        "-extfile",
        "ext.cnf",
      ]);
  const [certPem, keyPem] = openssl(
    [
      ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
        "-subj",
        `/CN=${cn}`,
        "-keyout",
        "c.key",
        "-out",
        "c.csr",
      ]),
      sign,
    ],
    {
      "ca.crt": ca.certPem,
      "ca.key": ca.keyPem,
      "ext.cnf": "extendedKeyUsage=clientAuth\n",
      "ca.cnf": CA_CONFIG,
      "index.txt": "",
      serial: "01\n",
    },
    ["c.crt", "c.key"],
  );
  return { certPem: certPem as string, keyPem: keyPem as string };
}

/**
 * A server certificate (ExtKeyUsage serverAuth) signed by `ca`, with DNS and URI names; `expired`: valid
 * for one day in 2020 only. For backends spoken to in TLS.
 */
export function serverCertificate(
  ca: TestAuthority,
  names: { readonly dns?: readonly string[]; readonly uri?: readonly string[] },
  opts: { expired?: boolean } = {},
): { certPem: string; keyPem: string } {
  const san = [...(names.dns ?? []).map((d) => `DNS:${d}`), ...(names.uri ?? []).map((u) => `URI:${u}`)];
  const ext = `extendedKeyUsage=serverAuth\n${san.length > 0 ? `subjectAltName=${san.join(",")}\n` : ""}`;
  const sign = opts.expired
    ? ["ca", "-batch", "-config", "ca.cnf", "-cert", "ca.crt", "-keyfile", "ca.key", "-in", "s.csr"].concat(
        ["-out", "s.crt", "-notext", "-extfile", "ext.cnf", "-startdate", "20200101000000Z"],
        ["-enddate", "20200102000000Z"],
      )
    : ["x509", "-req", "-in", "s.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"].concat([
        "-days",
        "1",
        "-out",
        "s.crt",
        "-extfile",
        "ext.cnf",
      ]);
  const [certPem, keyPem] = openssl(
    [
      [
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        "/CN=backend",
      ].concat(["-keyout", "s.key", "-out", "s.csr"]),
      sign,
    ],
    {
      "ca.crt": ca.certPem,
      "ca.key": ca.keyPem,
      "ext.cnf": ext,
      "ca.cnf": CA_CONFIG,
      "index.txt": "",
      serial: "01\n",
    },
    ["s.crt", "s.key"],
  );
  return { certPem: certPem as string, keyPem: keyPem as string };
}
