/**
 * YAML for the TLS integration tests: a TLS Secret from PEMs, an Ingress with `spec.tls`, and an echo
 * Service with its EndpointSlice, all in namespace `demo`; and an expired certificate made with openssl.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSCertificate } from "../../../src/model/index.ts";
import { serviceYaml } from "../../helpers/folder-fixtures.ts";

/**
 * A self-signed certificate for `name` valid only on 1 January 2020. `openssl req -x509` cannot backdate
 * (it refuses `-days` below 1), so it is signed with `openssl ca -selfsign`, which takes explicit dates.
 */
export function expiredSelfSigned(name: string): Pick<TLSCertificate, "certPem" | "keyPem"> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-expired-"));
  try {
    const f = (n: string) => join(dir, n);
    writeFileSync(f("index.txt"), "");
    writeFileSync(f("serial"), "01\n");
    writeFileSync(
      f("ca.cnf"),
      `[ca]\ndefault_ca = d\n[d]\ndatabase = ${f("index.txt")}\nnew_certs_dir = ${dir}\nserial = ${f("serial")}\n` +
        "default_md = sha256\npolicy = p\ncopy_extensions = copy\nunique_subject = no\n[p]\ncommonName = supplied\n",
    );
    const run = (args: string[]) => {
      const r = Bun.spawnSync(["openssl", ...args], { stdout: "ignore", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr.toString()}`);
    };
    run(
      ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        .concat(["-subj", `/CN=${name}`, "-addext", `subjectAltName=DNS:${name}`])
        .concat(["-keyout", f("tls.key"), "-out", f("csr.pem")]),
    );
    run(
      [
        "ca",
        "-batch",
        "-selfsign",
        "-config",
        f("ca.cnf"),
        "-keyfile",
        f("tls.key"),
        "-in",
        f("csr.pem"),
      ].concat(["-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-out", f("tls.crt")]),
    );
    return { certPem: readFileSync(f("tls.crt"), "utf8"), keyPem: readFileSync(f("tls.key"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function tlsSecretYaml(
  name: string,
  cert: Pick<TLSCertificate, "certPem" | "keyPem">,
  type = "kubernetes.io/tls",
): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return `apiVersion: v1
kind: Secret
metadata: { name: ${name}, namespace: demo }
type: ${type}
data: { tls.crt: ${b64(cert.certPem)}, tls.key: ${b64(cert.keyPem)} }
`;
}

/** An Ingress for `host` to Service `echo`; `tls` lists `[hosts, secretName]` entries. */
export function tlsIngressYaml(
  name: string,
  host: string,
  tls: readonly (readonly [readonly string[], string])[],
  annotations: Record<string, string> = {},
): string {
  const ann = Object.entries(annotations)
    .map(([k, v]) => `${k}: "${v}"`)
    .join(", ");
  const tlsYaml = tls.length
    ? `  tls:\n${tls.map(([hosts, secret]) => `    - { hosts: [${hosts.join(", ")}], secretName: ${secret} }\n`).join("")}`
    : "";
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: ${name}, namespace: demo, annotations: { ${ann} } }
spec:
  ingressClassName: gatehouse
${tlsYaml}  rules:
    - host: ${host}
      http:
        paths:
          - { path: /, pathType: Prefix, backend: { service: { name: echo, port: { number: 80 } } } }
`;
}

export function echoServiceYaml(echoPort: number): string {
  return serviceYaml("echo", "demo", echoPort);
}
