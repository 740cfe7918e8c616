/**
 * The shape of `gateway-api/cases.json` (see its README) and its loading. Only the fields the runner
 * reads are typed; the loader checks the top level and each test's required fields so a changed or
 * truncated data file is a clear error, never a quiet pass.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface Ref {
  readonly name: string;
  readonly namespace: string;
}

export interface ServiceData {
  readonly ref: string;
  readonly ports: readonly { name?: string; port: number; targetPort: number; appProtocol?: string }[];
  readonly podNamePrefix: string;
  readonly referencedByIncludedTests: boolean;
}

export interface Target {
  /** `ns/name` of the Gateway to dial. */
  readonly gateway: string;
  readonly port: number;
  readonly scheme: "http" | "https";
  readonly protocol: "HTTP" | "HTTPS" | "H2" | "H2C_PRIOR_KNOWLEDGE";
  readonly listener?: string;
  readonly serverName?: string;
  /** `ns/name` of the Secret whose certificate the client trusts. */
  readonly trustedServerCertificate?: string;
}

export interface RequestData {
  readonly method: string;
  /** null: the dialed address (with `:port` unless 80/443). */
  readonly host: string | null;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly unfollowRedirect?: boolean;
  readonly backendSetResponseHeaders?: Readonly<Record<string, string>>;
  /** websocket cases */
  readonly url?: string;
  readonly origin?: string;
}

export interface BackendRequest {
  readonly method: string;
  readonly host: string | null;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly absentHeaders?: readonly string[];
}

export interface Expected {
  readonly statusCodes: readonly number[];
  /** Deployment name prefix the echoed pod must start with; null accepts any. */
  readonly backend: string | null;
  readonly namespace: string;
  readonly backendRequest?: BackendRequest;
  readonly responseHeaders?: Readonly<Record<string, string>>;
  readonly responseHeadersOneOf?: Readonly<Record<string, readonly string[]>>;
  readonly responseAbsentHeaders?: readonly string[];
  readonly ignoreWhitespaceInResponseHeaderValues?: boolean;
  readonly redirect?: { scheme: string; host: string | null; port: string | null; path: string };
  readonly mirroredTo?: readonly { backend: string; percent?: number }[];
  readonly exchanges?: readonly WebSocketExchange[];
}

export interface WebSocketExchange {
  readonly send: { text?: string; binary?: readonly number[] };
  readonly receive: { text?: string; binary?: readonly number[] };
}

export interface Distribution {
  readonly totalRequests: number;
  readonly concurrency: number;
  readonly maxAttempts: number;
  readonly toleranceStdDevs?: number;
  readonly tolerance?: number;
  readonly expectedWeights?: Readonly<Record<string, number>>;
}

export type CaseKind =
  | "http"
  | "mirror"
  | "percentageMirror"
  | "weightedDistribution"
  | "backendHeaderMatchesPod"
  | "retry"
  | "websocket";

export interface RequestCase {
  readonly name: string;
  readonly kind: CaseKind;
  readonly phase?: number;
  readonly target: Target;
  readonly request: RequestData;
  readonly expected: Expected;
  readonly requestIdQueryParam?: string;
  readonly distribution?: Distribution;
  readonly repeat?: number;
  readonly header?: string;
}

/** One status check; fields beyond `check` depend on the kind (see the README). */
export interface StatusCheck {
  readonly check: string;
  readonly phase?: number;
  readonly subtest?: string;
  readonly [field: string]: unknown;
}

export interface Mutation {
  readonly phase: number;
  readonly op: "patch" | "delete";
  readonly kind: string;
  readonly ref: string;
  readonly description?: string;
}

export interface TestData {
  readonly name: string;
  readonly features: readonly string[];
  readonly level: "core" | "extended";
  readonly manifests: readonly string[];
  readonly gateways: readonly Ref[];
  readonly routes: readonly Ref[];
  readonly tls: { traffic: boolean; listenersInManifests: readonly string[]; usesBaseHttpsGateway: boolean };
  readonly statusChecks: readonly StatusCheck[];
  readonly mutations?: readonly Mutation[];
  readonly cases: readonly RequestCase[];
}

export interface SuiteData {
  readonly dir: string;
  readonly baseManifests: readonly string[];
  readonly services: readonly ServiceData[];
  readonly tests: readonly TestData[];
}

/** Read and sanity-check `<dir>/cases.json` and that every manifest it names exists. */
export async function loadSuiteData(dir: string): Promise<SuiteData> {
  const file = join(dir, "cases.json");
  const raw = JSON.parse(await readFile(file, "utf8")) as Partial<SuiteData>;
  if (!Array.isArray(raw.tests) || raw.tests.length === 0) throw new Error(`${file}: no tests`);
  if (!Array.isArray(raw.baseManifests) || !Array.isArray(raw.services))
    throw new Error(`${file}: baseManifests or services missing`);
  for (const t of raw.tests) {
    for (const field of ["name", "level", "manifests", "statusChecks", "cases", "features"] as const)
      if (t[field] === undefined) throw new Error(`${file}: test ${t.name ?? "?"} has no ${field}`);
  }
  const manifests = [...raw.baseManifests, ...raw.tests.flatMap((t) => t.manifests)];
  const missing = manifests.filter((m) => !existsSync(join(dir, "manifests", m)));
  if (missing.length)
    throw new Error(`manifests missing under ${join(dir, "manifests")}: ${missing.join(", ")}`);
  return { dir, baseManifests: raw.baseManifests, services: raw.services, tests: raw.tests };
}

/** `ns/name` → parts. */
export function splitRef(ref: string): Ref {
  const i = ref.indexOf("/");
  return { namespace: ref.slice(0, i), name: ref.slice(i + 1) };
}

/** Phases a test runs, ascending: 0 plus every phase a check, case or mutation names. */
export function phasesOf(test: TestData): number[] {
  const all = [
    0,
    ...test.statusChecks.map((c) => c.phase ?? 0),
    ...test.cases.map((c) => c.phase ?? 0),
    ...(test.mutations ?? []).map((m) => m.phase),
  ];
  return [...new Set(all)].sort((a, b) => a - b);
}
