/**
 * The certificates upstream's suite setup makes in code (`conformance/utils/kubernetes/certificate.go`), as
 * the data's `certificates[]` lists them: RSA 2048 keys in PKCS#1 PEM, CAs (serial 2024, CertSign) kept in
 * ConfigMaps (`ca.crt`, `key.crt`), leaves (random 128-bit serial) in `kubernetes.io/tls` Secrets, signed by
 * themselves or by a CA of the list. Made fresh each run with the openssl CLI (Bun and Node cannot build an
 * X.509 certificate); keys are generated in parallel, since that is most of the time.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { splitRef } from "../gateway-api-data.ts";
import type { K8sObject } from "../gateway-api-manifests.ts";
import type { CertificateSpec } from "./data.ts";

export interface Certificate {
  readonly ref: string;
  readonly kind: "Secret" | "ConfigMap";
  readonly certPem: string;
  readonly keyPem: string;
  /** The Secret or ConfigMap, as the folder holds it. */
  readonly object: K8sObject;
}

const keyUsageNames: Record<string, string> = {
  DigitalSignature: "digitalSignature",
  KeyEncipherment: "keyEncipherment",
  CertSign: "keyCertSign",
};
const extKeyUsageNames: Record<string, string> = { ServerAuth: "serverAuth", ClientAuth: "clientAuth" };

/** Make every certificate of `specs`, CAs before the leaves they sign; by ref. */
export async function makeCertificates(specs: readonly CertificateSpec[]): Promise<Map<string, Certificate>> {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-rest-certs-"));
  try {
    const keyFiles = new Map<string, string>();
    await Promise.all(
      specs.map(async (s, i) => {
        const file = join(dir, `${i}.key`);
        await openssl(["genrsa", "-traditional", "-out", file, "2048"]);
        keyFiles.set(s.ref, file);
      }),
    );
    const made = new Map<string, Certificate>();
    const ordered = [...specs].sort((a, b) => a.creationOrder - b.creationOrder);
    for (const [i, spec] of ordered.entries()) {
      const key = keyFiles.get(spec.ref) as string;
      const crt = join(dir, `${i}.crt`);
      const cnf = join(dir, `${i}.cnf`);
      await writeFile(cnf, opensslConfig(spec));
      const serial = typeof spec.serialNumber === "number" ? String(spec.serialNumber) : randomSerial();
      const common = ["-days", "365", "-set_serial", serial, "-extensions", "v3", "-out", crt];
      const issuer = spec.issuer === undefined || spec.issuer === "self" ? undefined : made.get(spec.issuer);
      if (spec.issuer !== undefined && spec.issuer !== "self" && !issuer)
        throw new Error(`certificate ${spec.ref}: issuer ${spec.issuer} is not made before it`);
      if (!issuer) {
        await openssl([
          "req",
          "-x509",
          "-new",
          "-key",
          key,
          "-subj",
          subjectOf(spec),
          "-config",
          cnf,
          ...common,
        ]);
      } else {
        const csr = join(dir, `${i}.csr`);
        const caCrt = join(dir, `${i}.ca.crt`);
        const caKey = join(dir, `${i}.ca.key`);
        await writeFile(caCrt, issuer.certPem);
        await writeFile(caKey, issuer.keyPem);
        await openssl(["req", "-new", "-key", key, "-subj", subjectOf(spec), "-config", cnf, "-out", csr]);
        await openssl([
          "x509",
          "-req",
          "-in",
          csr,
          "-CA",
          caCrt,
          "-CAkey",
          caKey,
          "-extfile",
          cnf,
          ...common,
        ]);
      }
      const certPem = await readFile(crt, "utf8");
      const keyPem = await readFile(key, "utf8");
      made.set(spec.ref, {
        ref: spec.ref,
        kind: spec.kind,
        certPem,
        keyPem,
        object: objectOf(spec, certPem, keyPem),
      });
    }
    return made;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Go's pkix.Name order: C, O, CN. */
export function subjectOf(spec: CertificateSpec): string {
  const parts = [
    ...(spec.subject.C ?? []).map((c) => `C=${c}`),
    ...(spec.subject.O ?? []).map((o) => `O=${o}`),
    `CN=${spec.subject.CN}`,
  ];
  return `/${parts.join("/")}`;
}

/** The extensions Go's template sets: basic constraints and key usage critical, then EKU and SANs. */
export function opensslConfig(spec: CertificateSpec): string {
  const sans = [
    ...(spec.dnsNames ?? []).map((d) => `DNS:${d}`),
    ...(spec.ipAddresses ?? []).map((ip) => `IP:${ip}`),
    ...(spec.uriSANs ?? []).map((u) => `URI:${u}`),
  ];
  const usage = (names: readonly string[], table: Record<string, string>) =>
    names.map((n) => {
      const v = table[n];
      if (!v) throw new Error(`certificate ${spec.ref}: unknown key usage ${n}`);
      return v;
    });
  return [
    "[req]",
    "distinguished_name = dn",
    "prompt = no",
    "[dn]",
    "CN = unused",
    "[v3]",
    `basicConstraints = critical,CA:${spec.isCA ? "TRUE" : "FALSE"}`,
    `keyUsage = critical,${usage(spec.keyUsage, keyUsageNames).join(",")}`,
    `extendedKeyUsage = ${usage(spec.extKeyUsage, extKeyUsageNames).join(",")}`,
    ...(spec.isCA ? ["subjectKeyIdentifier = hash"] : []),
    ...(sans.length ? [`subjectAltName = ${sans.join(",")}`] : []),
    "",
  ].join("\n");
}

/** A positive 128-bit serial, as Go's `rand.Int(rand.Reader, 2^128)`. */
function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] as number) & 0x7f;
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

function objectOf(spec: CertificateSpec, certPem: string, keyPem: string): K8sObject {
  const { namespace, name } = splitRef(spec.ref);
  const metadata = { name, namespace, generation: 1 };
  if (spec.kind === "ConfigMap")
    return { apiVersion: "v1", kind: "ConfigMap", metadata, data: { "ca.crt": certPem, "key.crt": keyPem } };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata,
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": Buffer.from(certPem).toString("base64"),
      "tls.key": Buffer.from(keyPem).toString("base64"),
    },
  };
}

/** Run openssl without blocking the event loop (echo servers of this process keep answering). */
async function openssl(args: readonly string[]): Promise<void> {
  const proc = Bun.spawn(["openssl", ...args], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`openssl ${args[0]} failed (exit ${code}): ${err.trim()}`);
}
