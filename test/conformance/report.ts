import type { Front } from "../helpers/fronts.ts";

/** One conformance case's outcome. */
export interface CaseResult {
  readonly suite: string;
  /** The front the gateway ran with. */
  readonly front: Front;
  readonly test: string;
  readonly name: string;
  /**
   * `pass`; `fail`; `xfail` (failed, listed as expected); `xpass` (listed as expected, but passed); `skip`
   * (not run, for the reason in `detail`: upstream skips it too).
   */
  readonly outcome: "pass" | "fail" | "xfail" | "xpass" | "skip";
  /** Why it failed (empty on pass). */
  readonly detail: string;
  /** Optional grouping for the summary table (e.g. core / extended). */
  readonly level?: string;
  /** Features the case's test exercises (Gateway API), for the per-feature table. */
  readonly features?: readonly string[];
}

/** Print a per-case table and per-test totals; returns the number of results that should fail the run. */
export function printReport(
  results: readonly CaseResult[],
  out: (line: string) => void = console.log,
): number {
  const mark = { pass: "PASS ", fail: "FAIL ", xfail: "XFAIL", xpass: "XPASS", skip: "SKIP " } as const;
  let currentTest = "";
  for (const r of results) {
    const key = `${r.suite}/${r.test} [${r.front} front]`;
    if (key !== currentTest) {
      out(`\n${key}`);
      currentTest = key;
    }
    out(`  ${mark[r.outcome]} ${r.name}${r.detail ? `\n         ${r.detail}` : ""}`);
  }
  const bySuite = new Map<string, Record<CaseResult["outcome"], number>>();
  for (const r of results) {
    const k = `${r.level ? `${r.suite} (${r.level})` : r.suite} [${r.front}]`;
    const t = bySuite.get(k) ?? { pass: 0, fail: 0, xfail: 0, xpass: 0, skip: 0 };
    t[r.outcome]++;
    bySuite.set(k, t);
  }
  out("\nsuite [front]                             pass  fail  xfail  xpass  skip  total");
  for (const [k, t] of bySuite) {
    const total = t.pass + t.fail + t.xfail + t.xpass + t.skip;
    out(
      `${k.padEnd(41)} ${String(t.pass).padStart(4)}  ${String(t.fail).padStart(4)}  ${String(t.xfail).padStart(5)}  ${String(t.xpass).padStart(5)}  ${String(t.skip).padStart(4)}  ${String(total).padStart(5)}`,
    );
  }
  printFeatureTable(results, out);
  return results.filter((r) => r.outcome === "fail" || r.outcome === "xpass").length;
}

/**
 * Per feature (from the data's `features`): how its cases fared, and how many of its tests pass outright
 * (every case pass, on every front run). A test counts toward each feature it lists, so columns do not
 * add up across rows; with both fronts every case counts twice.
 */
export function printFeatureTable(
  results: readonly CaseResult[],
  out: (line: string) => void = console.log,
): void {
  const rows = new Map<
    string,
    { cases: Record<CaseResult["outcome"], number>; tests: Map<string, boolean> }
  >();
  for (const r of results)
    for (const f of r.features ?? []) {
      const row = rows.get(f) ?? {
        cases: { pass: 0, fail: 0, xfail: 0, xpass: 0, skip: 0 },
        tests: new Map(),
      };
      row.cases[r.outcome]++;
      row.tests.set(r.test, (row.tests.get(r.test) ?? true) && r.outcome === "pass");
      rows.set(f, row);
    }
  if (!rows.size) return;
  out("\nfeature                                        pass  fail  xfail  xpass  tests passing");
  for (const [f, { cases: t, tests }] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
    const passing = [...tests.values()].filter(Boolean).length;
    out(
      `${f.padEnd(46)} ${String(t.pass).padStart(4)}  ${String(t.fail).padStart(4)}  ${String(t.xfail).padStart(5)}  ${String(t.xpass).padStart(5)}  ${String(passing).padStart(6)}/${tests.size}`,
    );
  }
}
