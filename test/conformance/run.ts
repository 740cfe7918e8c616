/**
 * `bun run conformance`: the upstream conformance suites, as data, against the live proxy.
 * Data comes from `$GATEHOUSE_CONFORMANCE_DIR` or `../shared/conformance` beside the repo; missing data is
 * an error (exit 2), never a pass. Exit code 1 when any case fails (or an expected failure passes).
 *
 *   bun run conformance [--suite ingress|gateway-api|gateway-api-rest] [--front raw|bun|both] [--test NAME[,NAME…]]
 *
 * Every suite runs once per front (`--front`, or `GATEHOUSE_CONFORMANCE_FRONT`; default both: the raw
 * HTTP/1.1 front and Bun.serve serve the plain-HTTP listeners in turn), and the table names the front
 * of each row.
 * `--test` (or `GATEHOUSE_CONFORMANCE_TEST`) runs only those Gateway API tests, of either Gateway API
 * suite (`gateway-api` or `gateway-api-rest`, the rest of v1.6.1: rest/suite.ts, with its per-group table).
 * `GATEHOUSE_CONFORMANCE_CASE_TIMEOUT_MS` (default 5000) bounds how long one
 * Gateway API request case may take to converge; `GATEHOUSE_CONFORMANCE_RETRY_MS` (150) is the pause
 * between its failed attempts. `GATEHOUSE_CONFORMANCE_REST_WORKERS` (4): how many rest tests run side by side.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { FRONTS, type Front } from "../helpers/fronts.ts";
import { expectedFailures } from "./expected-failures.ts";
import { runGatewayApiSuite } from "./gateway-api.ts";
import { runIngressSuite } from "./ingress.ts";
import { type CaseResult, printReport } from "./report.ts";
import { restExpectedFailures } from "./rest/expected-failures.ts";
import { runRestSuite } from "./rest/suite.ts";
import { printGroupTable } from "./rest/table.ts";
import type { TestVerdict } from "./rest/verdicts.ts";

const { values: args } = parseArgs({
  args: Bun.argv.slice(2),
  options: { suite: { type: "string" }, test: { type: "string" }, front: { type: "string" } },
  strict: true,
});
const only = (args.test ?? process.env.GATEHOUSE_CONFORMANCE_TEST ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
if (args.suite !== undefined && !["ingress", "gateway-api", "gateway-api-rest"].includes(args.suite)) {
  console.error(`--suite must be ingress, gateway-api or gateway-api-rest, not ${args.suite}`);
  process.exit(2);
}
const suite = args.suite ?? (only.length ? "gateway" : "all");
/** Whether `name` runs: `all` runs everything; `gateway` (from --test) both Gateway API suites. */
const runs = (name: string) =>
  suite === "all" || suite === name || (suite === "gateway" && name !== "ingress");

const frontArg = args.front ?? process.env.GATEHOUSE_CONFORMANCE_FRONT ?? "both";
if (!["raw", "bun", "both"].includes(frontArg)) {
  console.error(`--front must be raw, bun or both, not ${frontArg}`);
  process.exit(2);
}
const fronts: readonly Front[] = frontArg === "both" ? FRONTS : [frontArg as Front];

const root = resolve(
  process.env.GATEHOUSE_CONFORMANCE_DIR ?? join(import.meta.dir, "../../../shared/conformance"),
);
const ingressDir = join(root, "ingress");
const gatewayApiDir = join(root, "gateway-api");
const restDir = join(root, "gateway-api-rest");
const needed = [
  ...(runs("ingress") ? [join(ingressDir, "cases.json")] : []),
  ...(runs("gateway-api") ? [join(gatewayApiDir, "cases.json"), join(gatewayApiDir, "manifests")] : []),
  ...(runs("gateway-api-rest") ? [join(restDir, "cases.json"), join(restDir, "manifests")] : []),
];
const missing = needed.filter((f) => !existsSync(f));
if (missing.length) {
  console.error(`conformance data not found: ${missing.join(", ")} (set GATEHOUSE_CONFORMANCE_DIR)`);
  process.exit(2);
}

const envMs = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

/** `--test` names split by the suite that has them; a name neither has is an error. */
async function testNames(dir: string): Promise<Set<string>> {
  const data = (await Bun.file(join(dir, "cases.json")).json()) as { tests?: { name: string }[] };
  return new Set((data.tests ?? []).map((t) => t.name));
}
const onlyIn = new Map<string, string[]>();
if (only.length) {
  const first = runs("gateway-api") ? await testNames(gatewayApiDir) : new Set<string>();
  const rest = runs("gateway-api-rest") ? await testNames(restDir) : new Set<string>();
  const unknown = only.filter((n) => !first.has(n) && !rest.has(n));
  if (unknown.length) {
    console.error(`no such Gateway API test: ${unknown.join(", ")}`);
    process.exit(2);
  }
  onlyIn.set(
    "gateway-api",
    only.filter((n) => first.has(n)),
  );
  onlyIn.set(
    "gateway-api-rest",
    only.filter((n) => rest.has(n)),
  );
}
/** Whether suite `name` has anything to run (with --test: one of the names is its). */
const selected = (name: string) => runs(name) && (!only.length || (onlyIn.get(name)?.length ?? 0) > 0);
const deadlines = {
  caseDeadlineMs: envMs("GATEHOUSE_CONFORMANCE_CASE_TIMEOUT_MS", 5000),
  expectedFailureDeadlineMs: 1000,
  retryMs: envMs("GATEHOUSE_CONFORMANCE_RETRY_MS", 150),
};

const started = performance.now();
const results: CaseResult[] = [];
const verdicts: TestVerdict[] = [];
for (const front of fronts) {
  if (selected("ingress")) results.push(...(await runIngressSuite(ingressDir, expectedFailures, front)));
  try {
    if (selected("gateway-api")) {
      const names = onlyIn.get("gateway-api");
      results.push(
        ...(await runGatewayApiSuite(gatewayApiDir, expectedFailures, {
          ...(names ? { only: names } : {}),
          ...deadlines,
          front,
        })),
      );
    }
    if (selected("gateway-api-rest")) {
      const names = onlyIn.get("gateway-api-rest");
      const rest = await runRestSuite(restDir, restExpectedFailures, {
        ...(names ? { only: names } : {}),
        ...deadlines,
        front,
        workers: envMs("GATEHOUSE_CONFORMANCE_REST_WORKERS", 4),
      });
      results.push(...rest.results);
      verdicts.push(...rest.verdicts);
    }
  } catch (err) {
    // Bad or incomplete data (or a missing tool such as openssl): not a result, an error.
    console.error(`Gateway API suite could not run: ${(err as Error).message}`);
    process.exit(2);
  }
}
let failures = printReport(results);
printGroupTable(verdicts);
// A listed failure that matched no case is stale (renamed or fixed without notice): that fails the run too.
if (!only.length) {
  const stale = expectedFailures.filter(
    (x) =>
      runs(x.suite) &&
      !results.some(
        (r) =>
          r.suite === x.suite &&
          r.test === x.test &&
          r.name.includes(x.caseContains) &&
          (x.front === undefined || x.front === r.front) &&
          r.outcome !== "pass",
      ),
  );
  for (const x of stale)
    console.log(`stale entry in expected-failures.ts: ${x.suite}/${x.test} "${x.caseContains}"`);
  failures += stale.length;
}
console.log(`\n${results.length} cases in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(failures > 0 ? 1 : 0);
