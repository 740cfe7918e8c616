/**
 * `bun run conformance`: the upstream conformance suites, as data, against the live proxy.
 * Data comes from `$GATEHOUSE_CONFORMANCE_DIR` or `../shared/conformance` beside the repo; missing data is
 * an error (exit 2), never a pass. Exit code 1 when any case fails (or an expected failure passes).
 *
 *   bun run conformance [--suite ingress|gateway-api] [--front raw|bun|both] [--test NAME[,NAME…]]
 *
 * Every suite runs once per front (`--front`, or `GATEHOUSE_CONFORMANCE_FRONT`; default both: the raw
 * HTTP/1.1 front and Bun.serve serve the plain-HTTP listeners in turn), and the table names the front
 * of each row.
 * `--test` (or `GATEHOUSE_CONFORMANCE_TEST`) runs only those Gateway API tests, and implies
 * `--suite gateway-api`. `GATEHOUSE_CONFORMANCE_CASE_TIMEOUT_MS` (default 5000) bounds how long one
 * Gateway API request case may take to converge; `GATEHOUSE_CONFORMANCE_RETRY_MS` (150) is the pause
 * between its failed attempts.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { FRONTS, type Front } from "../helpers/fronts.ts";
import { expectedFailures } from "./expected-failures.ts";
import { runGatewayApiSuite } from "./gateway-api.ts";
import { runIngressSuite } from "./ingress.ts";
import { type CaseResult, printReport } from "./report.ts";

const { values: args } = parseArgs({
  args: Bun.argv.slice(2),
  options: { suite: { type: "string" }, test: { type: "string" }, front: { type: "string" } },
  strict: true,
});
const only = (args.test ?? process.env.GATEHOUSE_CONFORMANCE_TEST ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const suite = args.suite ?? (only.length ? "gateway-api" : "all");
if (!["all", "ingress", "gateway-api"].includes(suite)) {
  console.error(`--suite must be ingress or gateway-api, not ${suite}`);
  process.exit(2);
}

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
const needed = [
  ...(suite === "gateway-api" ? [] : [join(ingressDir, "cases.json")]),
  ...(suite === "ingress" ? [] : [join(gatewayApiDir, "cases.json"), join(gatewayApiDir, "manifests")]),
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

const started = performance.now();
const results: CaseResult[] = [];
for (const front of fronts) {
  if (suite !== "gateway-api") results.push(...(await runIngressSuite(ingressDir, expectedFailures, front)));
  if (suite !== "ingress") {
    try {
      results.push(
        ...(await runGatewayApiSuite(gatewayApiDir, expectedFailures, {
          ...(only.length ? { only } : {}),
          caseDeadlineMs: envMs("GATEHOUSE_CONFORMANCE_CASE_TIMEOUT_MS", 5000),
          expectedFailureDeadlineMs: 1000,
          retryMs: envMs("GATEHOUSE_CONFORMANCE_RETRY_MS", 150),
          front,
        })),
      );
    } catch (err) {
      // Bad or incomplete data (or a missing tool such as openssl): not a result, an error.
      console.error(`gateway-api suite could not run: ${(err as Error).message}`);
      process.exit(2);
    }
  }
}
let failures = printReport(results);
// A listed failure that matched no case is stale (renamed or fixed without notice): that fails the run too.
if (!only.length) {
  const stale = expectedFailures.filter(
    (x) =>
      (suite === "all" || suite === x.suite) &&
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
