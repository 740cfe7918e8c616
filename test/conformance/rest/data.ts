/**
 * The shape of `gateway-api-rest/cases.json` (its README: the fields it adds to `gateway-api/`) and its
 * loading. The request and status shapes of the first file still hold; this file types what is new. The
 * loader checks each test's required fields and that every manifest exists, so a changed or truncated data
 * file is a clear error, never a quiet pass. Case kinds and checks are not checked here: the runner fails
 * each one it does not know, where it is reported.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Mutation, RequestData, ServiceData, StatusCheck, Target } from "../gateway-api-data.ts";
import type { K8sObject } from "../gateway-api-manifests.ts";

/** The groups of the data's README table, in its order. */
export const GROUPS = [
  "GRPCRoute",
  "TLSRoute",
  "BackendTLSPolicy",
  "GatewayClientCertificate",
  "ListenerSet",
  "TCPRoute",
  "UDPRoute",
  "Gateway",
] as const;
export type Group = (typeof GROUPS)[number];

/** One certificate upstream's suite setup makes in code (README "Setup additions"). */
export interface CertificateSpec {
  /** `ns/name` of the Secret or ConfigMap that holds it. */
  readonly ref: string;
  readonly kind: "Secret" | "ConfigMap";
  /** `self`, or the ref of the CA ConfigMap that signs it; absent on CAs (self-signed). */
  readonly issuer?: string;
  readonly subject: { readonly CN: string; readonly O?: readonly string[]; readonly C?: readonly string[] };
  /** A number (CAs: 2024) or "random 128-bit". */
  readonly serialNumber: number | string;
  readonly isCA: boolean;
  readonly keyUsage: readonly string[];
  readonly extKeyUsage: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly uriSANs?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly creationOrder: number;
}

export type EchoMode = "http" | "grpc" | "tcp" | "udp" | "coredns";

export interface RestServiceData extends ServiceData {
  readonly selectorApp?: string;
  /** null for a Service no pod matches. */
  readonly podNamePrefix: string;
  readonly echoMode?: EchoMode;
  /** `ns/name` of the Secret the pod serves on its TLS port. */
  readonly tlsServerCertificate?: string;
  /** `ns/name` of the ConfigMap whose `ca.crt` verifies client certificates, if one is given. */
  readonly tlsClientCAConfigMap?: string;
  readonly ports: readonly {
    name?: string;
    port: number;
    targetPort: number;
    appProtocol?: string;
    protocol?: string;
  }[];
}

/** A request case of any kind: the fields of the first file's cases plus the new kinds' fields. */
export interface RestCase {
  readonly name: string;
  readonly kind: string;
  readonly phase?: number;
  readonly subtest?: string;
  readonly target: Target & {
    readonly clientCertificate?: string;
    readonly tls?: boolean;
    readonly trustedCAConfigMap?: string;
    readonly minTLSVersion?: string;
  };
  readonly request: RequestData & Record<string, unknown>;
  readonly expected: Record<string, unknown>;
  readonly distribution?: Record<string, unknown> & {
    readonly totalRequests: number;
    readonly concurrency: number;
    readonly maxAttempts: number;
    readonly tolerance?: number;
    readonly expectedWeights?: Readonly<Record<string, number>>;
  };
}

/** `op: create` carries the object; a patch may carry a JSON merge patch. `<...>` values are filled in. */
export interface RestMutation extends Omit<Mutation, "op"> {
  readonly op: "patch" | "delete" | "create";
  readonly object?: K8sObject;
  readonly mergePatch?: Record<string, unknown>;
  readonly sleepBeforeSeconds?: number;
}

export interface RestTest {
  readonly name: string;
  readonly group: Group;
  readonly features: readonly string[];
  readonly level: "core" | "extended";
  readonly profiles: Readonly<Record<string, string>>;
  readonly manifests: readonly string[];
  readonly skipIfSupportedFeatures?: readonly string[];
  readonly skipUnlessSupportedFeatures?: readonly string[];
  readonly setup?: readonly string[];
  readonly statusChecks: readonly StatusCheck[];
  readonly mutations?: readonly RestMutation[];
  readonly cases: readonly RestCase[];
}

export interface RestSuiteData {
  readonly dir: string;
  readonly baseManifests: readonly string[];
  readonly certificates: readonly CertificateSpec[];
  readonly services: readonly RestServiceData[];
  readonly tests: readonly RestTest[];
}

/** Read and sanity-check `<dir>/cases.json`, and that every manifest it names exists. */
export async function loadRestData(dir: string): Promise<RestSuiteData> {
  const file = join(dir, "cases.json");
  const raw = JSON.parse(await readFile(file, "utf8")) as Partial<RestSuiteData> & { formatVersion?: number };
  if (raw.formatVersion !== 1) throw new Error(`${file}: formatVersion ${raw.formatVersion}, want 1`);
  if (!Array.isArray(raw.tests) || raw.tests.length === 0) throw new Error(`${file}: no tests`);
  if (!Array.isArray(raw.baseManifests) || !Array.isArray(raw.services) || !Array.isArray(raw.certificates))
    throw new Error(`${file}: baseManifests, services or certificates missing`);
  for (const t of raw.tests) {
    for (const field of ["name", "group", "level", "manifests", "statusChecks", "cases", "features"] as const)
      if (t[field] === undefined) throw new Error(`${file}: test ${t.name ?? "?"} has no ${field}`);
    if (!(GROUPS as readonly string[]).includes(t.group))
      throw new Error(`${file}: test ${t.name} is in unknown group ${t.group}`);
  }
  const manifests = [...raw.baseManifests, ...raw.tests.flatMap((t) => t.manifests)];
  const missing = manifests.filter((m) => !existsSync(join(dir, "manifests", m)));
  if (missing.length)
    throw new Error(`manifests missing under ${join(dir, "manifests")}: ${missing.join(", ")}`);
  return {
    dir,
    baseManifests: raw.baseManifests,
    certificates: raw.certificates,
    services: raw.services,
    tests: raw.tests,
  };
}
