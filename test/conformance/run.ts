/**
 * `bun run conformance`: the upstream conformance suites, as data, against the live proxy.
 * Data comes from `$GATEHOUSE_CONFORMANCE_DIR` or `../shared/conformance` beside the repo; missing data is
 * an error, never a pass. Exit code 1 when any case fails (or an expected failure passes).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { expectedFailures } from "./expected-failures.ts";
import { runIngressSuite } from "./ingress.ts";
import { printReport } from "./report.ts";

const root = resolve(
  process.env.GATEHOUSE_CONFORMANCE_DIR ?? join(import.meta.dir, "../../../shared/conformance"),
);
const ingressDir = join(root, "ingress");
if (!existsSync(join(ingressDir, "cases.json"))) {
  console.error(
    `conformance data not found: ${join(ingressDir, "cases.json")} (set GATEHOUSE_CONFORMANCE_DIR)`,
  );
  process.exit(2);
}

const started = performance.now();
const results = await runIngressSuite(ingressDir, expectedFailures);
const failures = printReport(results);
console.log(`\n${results.length} cases in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(failures > 0 ? 1 : 0);
