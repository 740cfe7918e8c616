/** One conformance case's outcome. */
export interface CaseResult {
  readonly suite: string;
  readonly test: string;
  readonly name: string;
  /** `pass`; `fail`; `xfail` (failed, listed as expected); `xpass` (listed as expected, but passed). */
  readonly outcome: "pass" | "fail" | "xfail" | "xpass";
  /** Why it failed (empty on pass). */
  readonly detail: string;
  /** Optional grouping for the feature table (e.g. core / extended). */
  readonly level?: string;
}

/** Print a per-case table and per-test totals; returns the number of results that should fail the run. */
export function printReport(
  results: readonly CaseResult[],
  out: (line: string) => void = console.log,
): number {
  const mark = { pass: "PASS ", fail: "FAIL ", xfail: "XFAIL", xpass: "XPASS" } as const;
  let currentTest = "";
  for (const r of results) {
    const key = `${r.suite}/${r.test}`;
    if (key !== currentTest) {
      out(`\n${key}`);
      currentTest = key;
    }
    out(`  ${mark[r.outcome]} ${r.name}${r.detail ? `\n         ${r.detail}` : ""}`);
  }
  const bySuite = new Map<string, Record<CaseResult["outcome"], number>>();
  for (const r of results) {
    const k = r.level ? `${r.suite} (${r.level})` : r.suite;
    const t = bySuite.get(k) ?? { pass: 0, fail: 0, xfail: 0, xpass: 0 };
    t[r.outcome]++;
    bySuite.set(k, t);
  }
  out("\nsuite                      pass  fail  xfail  xpass  total");
  for (const [k, t] of bySuite) {
    const total = t.pass + t.fail + t.xfail + t.xpass;
    out(
      `${k.padEnd(26)} ${String(t.pass).padStart(4)}  ${String(t.fail).padStart(4)}  ${String(t.xfail).padStart(5)}  ${String(t.xpass).padStart(5)}  ${String(total).padStart(5)}`,
    );
  }
  return results.filter((r) => r.outcome === "fail" || r.outcome === "xpass").length;
}
