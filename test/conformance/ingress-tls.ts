/**
 * TLS pieces of the Ingress conformance run: the Secret the upstream suite creates in code (README
 * "host_rules": self-signed RSA-2048, CN `default`, O `Acme Co`, the step's DNS SANs, one year), and the
 * `tls.*` expectations, read from the certificate the proxy serves for the request's SNI.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkServerIdentity, connect, type PeerCertificate } from "node:tls";

/** A `kubernetes.io/tls` Secret for `dnsNames`, made with the openssl CLI (throws when it fails). */
export async function conformanceTlsSecret(name: string, namespace: string, dnsNames: readonly string[]) {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-conf-ingress-tls-"));
  try {
    const key = join(dir, "tls.key");
    const crt = join(dir, "tls.crt");
    const sans = dnsNames.map((n) => `DNS:${n}`).join(",");
    const proc = Bun.spawnSync(
      ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365"]
        .concat(["-subj", "/O=Acme Co/CN=default", "-addext", `subjectAltName=${sans}`])
        .concat(["-keyout", key, "-out", crt]),
    );
    if (proc.exitCode !== 0) throw new Error(`openssl failed: ${proc.stderr.toString()}`);
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace },
      type: "kubernetes.io/tls",
      data: {
        "tls.crt": Buffer.from(await readFile(crt, "utf8")).toString("base64"),
        "tls.key": Buffer.from(await readFile(key, "utf8")).toString("base64"),
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The certificate served on `port` for SNI `servername` (chain not verified: it is self-signed). */
export function servedCertificate(port: number, servername: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate());
      s.end();
    });
    s.setTimeout(10_000, () => s.destroy(new Error("TLS handshake timed out")));
    s.on("error", reject);
  });
}

/** Problems with the `tls.*` expectations of a scenario ("" when they hold). */
export function checkTlsExpectations(expect: Record<string, unknown>, cert: PeerCertificate): string[] {
  const problems: string[] = [];
  const first = (cert.subjectaltname ?? "")
    .split(",")
    .map((s) => s.trim())
    .find((s) => s.startsWith("DNS:"))
    ?.slice(4);
  const wantFirst = expect["tls.certificateFirstDnsName"];
  if (wantFirst !== undefined && first !== wantFirst)
    problems.push(`certificate's first DNS name ${first}, want ${wantFirst}`);
  const host = expect["tls.certificateValidForHostname"];
  if (typeof host === "string" && checkServerIdentity(host, cert) !== undefined)
    problems.push(`certificate is not valid for ${host} (names: ${cert.subjectaltname})`);
  return problems;
}
