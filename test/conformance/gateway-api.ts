/**
 * The upstream Gateway API conformance subset (`<dir>/cases.json`, see its README) against the live
 * gateway in folder mode. The echo fleet and TLS Secrets are made once; each test gets a fresh folder
 * (base + its manifests + generated objects) and a fresh gateway, then runs its phases: apply the phase's
 * mutations, wait for the gateway to apply them, run the phase's status checks and request cases.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../src/cli/serve.ts";
import type { Front } from "../helpers/fronts.ts";
import type { ExpectedFailure } from "./expected-failures.ts";
import { runCase } from "./gateway-api-cases.ts";
import { makeTlsSecrets, type TlsSecret } from "./gateway-api-certs.ts";
import {
  loadSuiteData,
  phasesOf,
  type RequestCase,
  type StatusCheck,
  type TestData,
} from "./gateway-api-data.ts";
import { type EchoFleet, startEchoFleet } from "./gateway-api-fleet.ts";
import { applied, gatewayAddress, startGatewayOn, statusesOf } from "./gateway-api-gateway.ts";
import {
  gatewayClassObject,
  type Placed,
  readManifest,
  refOf,
  writeFolder,
} from "./gateway-api-manifests.ts";
import { applyMutation } from "./gateway-api-mutations.ts";
import { runStatusCheck } from "./gateway-api-status.ts";
import type { CaseResult } from "./report.ts";

export interface GatewayApiOptions {
  /** Run only these tests (by name). */
  readonly only?: readonly string[];
  /** How long a request case may take to converge (upstream: 30 s). */
  readonly caseDeadlineMs: number;
  /** The same for cases listed in expected-failures.ts: short, so known failures cost little time. */
  readonly expectedFailureDeadlineMs: number;
  readonly retryMs: number;
  /** What serves the plain-HTTP listeners. */
  readonly front: Front;
}

interface Shared {
  readonly dir: string;
  readonly base: readonly Placed[];
  readonly secrets: readonly TlsSecret[];
  readonly fleet: EchoFleet;
  readonly xfails: readonly ExpectedFailure[];
  readonly options: GatewayApiOptions;
}

export async function runGatewayApiSuite(
  dir: string,
  xfails: readonly ExpectedFailure[],
  options: GatewayApiOptions,
): Promise<CaseResult[]> {
  const data = await loadSuiteData(dir);
  const tests = options.only ? data.tests.filter((t) => options.only?.includes(t.name)) : data.tests;
  const unknown = (options.only ?? []).filter((n) => !data.tests.some((t) => t.name === n));
  if (unknown.length) throw new Error(`no such Gateway API test: ${unknown.join(", ")}`);
  const base: Placed[] = [];
  for (const m of data.baseManifests)
    for (const object of await readManifest(dir, m)) base.push({ file: "base.yaml", object });
  const secrets = await makeTlsSecrets();
  const fleet = await startEchoFleet(data.services);
  const results: CaseResult[] = [];
  try {
    const shared = { dir, base, secrets, fleet, xfails, options };
    for (const test of tests) results.push(...(await runTest(shared, test)));
  } finally {
    await fleet.stop();
  }
  return results;
}

async function runTest(shared: Shared, test: TestData): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const record = (name: string, detail: string) =>
    results.push(result(shared.xfails, test, name, detail, shared.options.front));
  let objects = await folderObjects(shared, test);
  const privileged = listenerPorts(objects).filter((p) => p < 1024);
  if (privileged.length && process.getuid?.() !== 0) {
    const why = `needs root for privileged ports (listeners on ${[...new Set(privileged)].join(", ")})`;
    for (const item of itemsOf(test)) record(item.name, why);
    return results;
  }
  const folder = await mkdtemp(join(tmpdir(), `gatehouse-gwapi-${test.name}-`));
  let gw: RunningGateway | undefined;
  try {
    let files = await writeFolder(folder, objects);
    try {
      gw = await startGatewayOn(
        folder,
        shared.options.front,
        test.cases.some((c) => c.target.protocol === "H2"),
      );
    } catch (err) {
      for (const item of itemsOf(test)) record(item.name, `gateway did not start: ${(err as Error).message}`);
      return results;
    }
    for (const phase of phasesOf(test)) {
      const generationsBefore = new Map(
        objects.map((p) => [`${p.object.kind} ${refOf(p.object)}`, p.object.metadata.generation ?? 1]),
      );
      const mutations = (test.mutations ?? []).filter((m) => m.phase === phase);
      if (mutations.length) {
        for (const m of mutations) objects = applyMutation(objects, m);
        const done = applied(gw, 5000);
        files = await writeFolder(folder, objects, files);
        await done;
      }
      for (const check of test.statusChecks.filter((c) => (c.phase ?? 0) === phase)) {
        const running = gw;
        const current = objects;
        const detail = await settle(shared.options, () =>
          runStatusCheck(check, { statuses: statusesOf(running), objects: current, generationsBefore }),
        );
        record(checkName(check), detail);
      }
      const cases = test.cases.filter((c) => (c.phase ?? 0) === phase);
      const details = await runCases(shared, test, gw, cases);
      for (const [i, c] of cases.entries()) record(caseName(c), details[i] ?? "not run");
    }
  } catch (err) {
    record("runner", `error: ${(err as Error).stack ?? err}`);
  } finally {
    await gw?.stop();
    await rm(folder, { recursive: true, force: true });
  }
  return results;
}

/** Base + the test's manifests + GatewayClass and Secrets, then EndpointSlices for the echo fleet. */
async function folderObjects(shared: Shared, test: TestData): Promise<Placed[]> {
  const objects: Placed[] = [...shared.base];
  for (const [i, m] of test.manifests.entries())
    for (const object of await readManifest(shared.dir, m)) objects.push({ file: `test-${i}.yaml`, object });
  objects.push({ file: "generated.yaml", object: gatewayClassObject() });
  for (const s of shared.secrets) objects.push({ file: "generated.yaml", object: s.object });
  return shared.fleet.withEndpoints(objects);
}

function listenerPorts(objects: readonly Placed[]): number[] {
  return objects
    .filter((p) => p.object.kind === "Gateway")
    .flatMap((p) => ((p.object.spec?.listeners ?? []) as { port: number }[]).map((l) => l.port));
}

/** Status is computed per apply, so a check needs no long wait; a short one covers a split apply. */
async function settle(options: GatewayApiOptions, check: () => string): Promise<string> {
  const end = performance.now() + 1000;
  let detail = check();
  while (detail && performance.now() < end) {
    await Bun.sleep(options.retryMs);
    detail = check();
  }
  return detail;
}

/**
 * Plain request cases run 6 at a time (upstream runs many subtests in parallel); the statistical ones
 * run alone afterwards, so concurrency does not skew their counts.
 */
async function runCases(shared: Shared, test: TestData, gw: RunningGateway, cases: readonly RequestCase[]) {
  const details: string[] = new Array(cases.length);
  const one = async (i: number) => {
    const c = cases[i] as RequestCase;
    const address = gatewayAddress(gw, c.target.gateway);
    if (!address) {
      details[i] =
        `Gateway ${c.target.gateway} has no address (status.addresses empty, no listener in the model)`;
      return;
    }
    const trusted = shared.secrets.find((s) => s.ref === c.target.trustedServerCertificate);
    const listed = xfailFor(shared.xfails, test, caseName(c), shared.options.front) !== undefined;
    const ctx = {
      dial: { address, target: c.target, timeoutMs: 10_000, ...(trusted ? { ca: trusted.certPem } : {}) },
      fleet: shared.fleet,
      deadlineMs: listed ? shared.options.expectedFailureDeadlineMs : shared.options.caseDeadlineMs,
      retryMs: shared.options.retryMs,
    };
    try {
      details[i] = await runCase(c, ctx);
    } catch (err) {
      details[i] = `error: ${(err as Error).message}`;
    }
  };
  const statistical = new Set(["percentageMirror", "weightedDistribution", "backendHeaderMatchesPod"]);
  const plain = cases.flatMap((c, i) => (statistical.has(c.kind) ? [] : [i]));
  let next = 0;
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (next < plain.length) await one(plain[next++] as number);
    }),
  );
  for (const [i, c] of cases.entries()) if (statistical.has(c.kind)) await one(i);
  return details;
}

function itemsOf(test: TestData): { name: string }[] {
  return [
    ...test.statusChecks.map((c) => ({ name: checkName(c) })),
    ...test.cases.map((c) => ({ name: caseName(c) })),
  ];
}

const phaseSuffix = (phase: number | undefined) => (phase ? ` [phase ${phase}]` : "");

function caseName(c: RequestCase): string {
  return `${c.name}${phaseSuffix(c.phase)}`;
}

/** `status <Check> <subject>`: unique within a test, and readable in the table. */
function checkName(check: StatusCheck): string {
  const c = check as Record<string, unknown>;
  const cond = c.condition as { type: string; status: string } | undefined;
  const subject = [
    c.gateway ??
      c.route ??
      (c.object as { ref?: string } | undefined)?.ref ??
      (c.namespaces as string[] | undefined)?.join(","),
    c.parent ? `parent ${c.parent}` : undefined,
    cond ? `${cond.type}=${cond.status}` : undefined,
  ].filter(Boolean);
  return `status ${check.check} ${subject.join(" ")}${phaseSuffix(check.phase)}`;
}

function xfailFor(xfails: readonly ExpectedFailure[], test: TestData, name: string, front: Front) {
  return xfails.find(
    (x) =>
      x.suite === "gateway-api" &&
      x.test === test.name &&
      name.includes(x.caseContains) &&
      (x.front === undefined || x.front === front),
  );
}

function result(
  xfails: readonly ExpectedFailure[],
  test: TestData,
  name: string,
  detail: string,
  front: Front,
): CaseResult {
  const xfail = xfailFor(xfails, test, name, front);
  const outcome = detail === "" ? (xfail ? "xpass" : "pass") : xfail ? "xfail" : "fail";
  const shown =
    outcome === "xfail"
      ? `${xfail?.reason} — ${detail}`
      : outcome === "xpass"
        ? "passes now: remove it from expected-failures.ts"
        : detail;
  return {
    suite: "gateway-api",
    front,
    test: test.name,
    name,
    outcome,
    detail: shown,
    level: test.level,
    features: test.features,
  };
}
