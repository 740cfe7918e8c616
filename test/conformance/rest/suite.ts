/**
 * `gateway-api-rest` (the 65 tests of v1.6.1 beyond the first file) against the live gateway in folder
 * mode, as gateway-api.ts runs the first file: certificates and echo pods made once, then per test a fresh
 * folder and gateway, and its phases (mutations, then status checks, then request cases). Unlike the first
 * file, the verdict that counts is per test (README: every test reported): see expected-failures.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningGateway } from "../../../src/cli/serve.ts";
import { isKnownKind } from "../../../src/sources/schema/index.ts";
import type { Front } from "../../helpers/fronts.ts";
import { applied, gatewayAddress, startGatewayOn, statusesOf } from "../gateway-api-gateway.ts";
import {
  gatewayClassObject,
  type Placed,
  readManifest,
  refOf,
  writeFolder,
} from "../gateway-api-manifests.ts";
import type { CaseResult } from "../report.ts";
import { runRestCase, statisticalKinds } from "./cases.ts";
import { type Certificate, makeCertificates } from "./certificates.ts";
import { loadRestData, type RestCase, type RestTest } from "./data.ts";
import { type RestExpectedFailure, restExpectedFor } from "./expected-failures.ts";
import { type RestFleet, startRestFleet } from "./fleet.ts";
import { applyRestMutation } from "./mutations.ts";
import { fillSetupPlaceholders } from "./placeholders.ts";
import { runRestStatusCheck } from "./status-checks.ts";
import { type Item, type TestVerdict, verdictOf } from "./verdicts.ts";

export interface RestOptions {
  readonly only?: readonly string[];
  readonly caseDeadlineMs: number;
  /** The same for tests listed in expected-failures.ts: short, so known failures cost little time. */
  readonly expectedFailureDeadlineMs: number;
  readonly retryMs: number;
  readonly front: Front;
  /** Tests run side by side, each worker with its own address pool (default 4). */
  readonly workers?: number;
}

/** The features Gatehouse claims, as far as the data's skip conditions ask (upstream SupportedFeatures). */
export const supportedFeatures: ReadonlySet<string> = new Set([
  "Gateway",
  "HTTPRoute",
  "ReferenceGrant",
  "TLSRoute",
  "TLSRouteModeTerminate",
  "TLSRouteModeMixed",
]);

/** Worker k's Gateways take addresses from 127.0.(20+k).0/24: apart from the first file's 127.0.1.0/24. */
const workerPool = (k: number) => `127.0.${20 + k}.0/24`;

interface Shared {
  readonly dir: string;
  readonly base: readonly Placed[];
  readonly certs: ReadonlyMap<string, Certificate>;
  readonly fleet: RestFleet;
  readonly xfails: readonly RestExpectedFailure[];
  readonly options: RestOptions;
}

/** Certificates are made once per process: both fronts use the same ones (a cluster's would not change). */
let certificates: Promise<Map<string, Certificate>> | undefined;

export async function runRestSuite(
  dir: string,
  xfails: readonly RestExpectedFailure[],
  options: RestOptions,
): Promise<{ results: CaseResult[]; verdicts: TestVerdict[] }> {
  const data = await loadRestData(dir);
  const names = new Set(data.tests.map((t) => t.name));
  const stale = xfails.filter((x) => !names.has(x.test)).map((x) => x.test);
  if (stale.length)
    throw new Error(`rest/expected-failures.ts names tests the data lacks: ${stale.join(", ")}`);
  const tests = options.only ? data.tests.filter((t) => options.only?.includes(t.name)) : data.tests;
  const base: Placed[] = [];
  for (const m of data.baseManifests)
    for (const object of await readManifest(dir, m)) base.push({ file: "base.yaml", object });
  certificates ??= makeCertificates(data.certificates);
  const certs = await certificates;
  const fleet = await startRestFleet(data.services, certs);
  const outcomes: { results: CaseResult[]; verdict: TestVerdict }[] = new Array(tests.length);
  try {
    const shared = { dir, base, certs, fleet, xfails, options };
    // Most of a failing test is waiting for deadlines, so a few side by side cut the run's time.
    let next = 0;
    const worker = async (k: number) => {
      while (next < tests.length) {
        const i = next++;
        const test = tests[i] as RestTest;
        const items = await runTest(shared, test, workerPool(k));
        const xfail = restExpectedFor(xfails, test.name, options.front);
        const { verdict, results } = verdictOf(test, options.front, items, xfail);
        outcomes[i] = { results, verdict };
      }
    };
    // At most 16: each worker owns a /24 of 127.0.20.0 and up.
    const workers = Math.min(16, Math.max(1, Math.floor(options.workers ?? 4)));
    await Promise.all(Array.from({ length: workers }, (_, k) => worker(k)));
  } finally {
    await fleet.stop();
  }
  return { results: outcomes.flatMap((o) => o.results), verdicts: outcomes.map((o) => o.verdict) };
}

async function runTest(shared: Shared, test: RestTest, pool: string): Promise<Item[]> {
  const skip = skipReason(test);
  if (skip) return [{ name: "(test)", detail: skip, skip: true }];
  const listed = restExpectedFor(shared.xfails, test.name, shared.options.front) !== undefined;
  const items: Item[] = [];
  let objects = await folderObjects(shared, test, pool);
  const privileged = listenerPorts(objects).filter((p) => p < 1024);
  if (privileged.length && process.getuid?.() !== 0)
    return [
      {
        name: "(test)",
        detail: `skipped: needs root for listener ports ${privileged.join(", ")}`,
        skip: true,
      },
    ];
  const folder = await mkdtemp(join(tmpdir(), `gatehouse-rest-${test.name}-`));
  let gw: RunningGateway | undefined;
  try {
    let files = await writeFolder(folder, objects);
    gw = await startGatewayOn(folder, shared.options.front, false, pool);
    for (const phase of phasesOf(test)) {
      const generationsBefore = new Map(
        objects.map((p) => [`${p.object.kind} ${refOf(p.object)}`, p.object.metadata.generation ?? 1]),
      );
      const mutations = (test.mutations ?? []).filter((m) => m.phase === phase);
      for (const m of mutations) objects = await applyRestMutation(objects, m, { certs: shared.certs, pool });
      if (mutations.length) {
        // A kind the gateway does not read changes nothing it serves: no apply follows to wait for.
        const done = mutations.some((m) => isKnownKind(m.kind)) ? applied(gw, 5000) : Promise.resolve();
        files = await writeFolder(folder, objects, files);
        await done;
      }
      const checks = test.statusChecks.filter((c) => (c.phase ?? 0) === phase);
      const running = gw;
      const current = objects;
      const details = await settle(listed ? 250 : 1000, shared.options.retryMs, () =>
        checks.map((c) =>
          runRestStatusCheck(c, { statuses: statusesOf(running), objects: current, generationsBefore, pool }),
        ),
      );
      for (const [i, c] of checks.entries())
        items.push({ name: checkName(c), detail: details[i] ?? "not run" });
      const cases = test.cases.filter((c) => (c.phase ?? 0) === phase);
      const deadlineMs = listed ? shared.options.expectedFailureDeadlineMs : shared.options.caseDeadlineMs;
      const outcomes = await runCases(shared, gw, cases, deadlineMs);
      for (const [i, c] of cases.entries())
        items.push({ name: caseName(c), detail: outcomes[i] ?? "not run" });
    }
  } catch (err) {
    items.push({ name: "runner", detail: `error: ${(err as Error).stack ?? err}` });
  } finally {
    await gw?.stop();
    await rm(folder, { recursive: true, force: true });
  }
  return items;
}

/** Upstream returns early (the test passes with nothing checked) on these; we report them as skipped. */
function skipReason(test: RestTest): string {
  const claimed = (test.skipIfSupportedFeatures ?? []).filter((f) => supportedFeatures.has(f));
  if (claimed.length) return `skipped: upstream skips it when ${claimed.join(", ")} is supported`;
  const unclaimed = (test.skipUnlessSupportedFeatures ?? []).filter((f) => !supportedFeatures.has(f));
  if (unclaimed.length) return `skipped: upstream runs it only when ${unclaimed.join(", ")} is supported`;
  return "";
}

/** Ports of every Gateway and ListenerSet listener in the folder. */
function listenerPorts(objects: readonly Placed[]): number[] {
  const ports = objects
    .filter((p) => p.object.kind === "Gateway" || p.object.kind === "ListenerSet")
    .flatMap((p) => ((p.object.spec?.listeners ?? []) as { port: number }[]).map((l) => l.port));
  return [...new Set(ports)];
}

/** Base + the test's manifests + GatewayClass and certificates, placeholders filled, then EndpointSlices. */
async function folderObjects(shared: Shared, test: RestTest, pool: string): Promise<Placed[]> {
  const objects: Placed[] = [...shared.base];
  for (const [i, m] of test.manifests.entries())
    for (const object of await readManifest(shared.dir, m)) objects.push({ file: `test-${i}.yaml`, object });
  objects.push({ file: "generated.yaml", object: gatewayClassObject() });
  for (const c of shared.certs.values()) objects.push({ file: "certificates.yaml", object: c.object });
  return shared.fleet.withEndpoints(fillSetupPlaceholders(objects, pool));
}

function phasesOf(test: RestTest): number[] {
  const all = [
    0,
    ...test.statusChecks.map((c) => c.phase ?? 0),
    ...test.cases.map((c) => c.phase ?? 0),
    ...(test.mutations ?? []).map((m) => m.phase),
  ];
  return [...new Set(all)].sort((a, b) => a - b);
}

/** All of a phase's checks at once, polled until they all hold or `windowMs` passes: status is per apply. */
async function settle(windowMs: number, retryMs: number, check: () => string[]): Promise<string[]> {
  const end = performance.now() + windowMs;
  let details = check();
  while (details.some(Boolean) && performance.now() < end) {
    await Bun.sleep(retryMs);
    details = check();
  }
  return details;
}

/** Plain cases 6 at a time (upstream runs subtests in parallel); statistical ones alone, afterwards. */
async function runCases(
  shared: Shared,
  gw: RunningGateway,
  cases: readonly RestCase[],
  deadlineMs: number,
): Promise<string[]> {
  const out: string[] = new Array(cases.length);
  const one = async (i: number) => {
    const c = cases[i] as RestCase;
    const address = gatewayAddress(gw, c.target.gateway);
    out[i] = address
      ? await runRestCase(c, { address, certs: shared.certs, deadlineMs, retryMs: shared.options.retryMs })
      : `Gateway ${c.target.gateway} has no address (status.addresses empty, no listener in the model)`;
  };
  const plain = cases.flatMap((c, i) => (statisticalKinds.has(c.kind) ? [] : [i]));
  let next = 0;
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (next < plain.length) await one(plain[next++] as number);
    }),
  );
  for (const [i, c] of cases.entries()) if (statisticalKinds.has(c.kind)) await one(i);
  return out;
}

const phaseSuffix = (phase: number | undefined) => (phase ? ` [phase ${phase}]` : "");

function caseName(c: RestCase): string {
  return `${c.subtest && c.subtest !== c.name ? `${c.subtest} / ` : ""}${c.name}${phaseSuffix(c.phase)}`;
}

function checkName(check: { check: string; phase?: number } & Record<string, unknown>): string {
  const ref = (v: unknown) => (typeof v === "object" && v ? (v as { ref?: string }).ref : v);
  const subject = [
    check.gateway ??
      check.route ??
      check.listenerSet ??
      check.policy ??
      check.gatewayClass ??
      ref(check.object),
    check.parent ? `parent ${ref(check.parent)}` : undefined,
    check.listener ? `listener ${check.listener}` : undefined,
    (check.condition as { type?: string; status?: string } | undefined)?.type
      ? `${(check.condition as { type: string }).type}=${(check.condition as { status: string }).status}`
      : undefined,
  ].filter(Boolean);
  return `status ${check.check} ${subject.join(" ")}${phaseSuffix(check.phase)}`;
}
