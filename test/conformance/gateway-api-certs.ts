/**
 * The TLS Secrets upstream's suite setup creates in code (README "How upstream runs a test"): self-signed
 * certificates made once per run with the `openssl` CLI, as `kubernetes.io/tls` Secrets. The PEMs are kept
 * so HTTPS clients can trust exactly the certificate a case names.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { K8sObject } from "./gateway-api-manifests.ts";

export interface TlsSecret {
  /** `ns/name` */
  readonly ref: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly object: K8sObject;
}

const wanted = [
  {
    ref: "gateway-conformance-infra/tls-validity-checks-certificate",
    cn: "default",
    sans: ["*", "*.org", "*.wildcard.org"],
  },
  { ref: "gateway-conformance-web-backend/certificate", cn: "default", sans: ["*"] },
];

/** Make the suite's certificates; throws with openssl's message when the CLI is missing or fails. */
export async function makeTlsSecrets(): Promise<TlsSecret[]> {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-conf-certs-"));
  try {
    const out: TlsSecret[] = [];
    for (const [i, w] of wanted.entries()) {
      const key = join(dir, `${i}.key`);
      const crt = join(dir, `${i}.crt`);
      const proc = Bun.spawnSync([
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "365",
        "-keyout",
        key,
        "-out",
        crt,
        "-subj",
        `/CN=${w.cn}`,
        "-addext",
        `subjectAltName=${w.sans.map((s) => `DNS:${s}`).join(",")}`,
      ]);
      if (proc.exitCode !== 0) throw new Error(`openssl failed: ${proc.stderr.toString()}`);
      const certPem = await readFile(crt, "utf8");
      const keyPem = await readFile(key, "utf8");
      const [namespace, name] = w.ref.split("/") as [string, string];
      out.push({
        ref: w.ref,
        certPem,
        keyPem,
        object: {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name, namespace, generation: 1 },
          type: "kubernetes.io/tls",
          data: {
            "tls.crt": Buffer.from(certPem).toString("base64"),
            "tls.key": Buffer.from(keyPem).toString("base64"),
          },
        },
      });
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
