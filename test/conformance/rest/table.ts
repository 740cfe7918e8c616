/**
 * The rest suite's summary: one row per group (the data README's table), per front, counting tests —
 * passed, failed unexpectedly, failing as expected (with the issues that will fix them), passing though
 * listed, skipped — then every skip with its reason and every unexpected result.
 */
import { GROUPS } from "./data.ts";
import type { TestVerdict } from "./verdicts.ts";

export function printGroupTable(
  verdicts: readonly TestVerdict[],
  out: (line: string) => void = console.log,
): void {
  if (!verdicts.length) return;
  const fronts = [...new Set(verdicts.map((v) => v.front))];
  out("\ngateway-api-rest, tests per group");
  out("group [front]                         tests  pass  fail  xfail  xpass  skip  issues");
  for (const group of GROUPS)
    for (const front of fronts) {
      const rows = verdicts.filter((v) => v.group === group && v.front === front);
      if (!rows.length) continue;
      const n = (o: TestVerdict["outcome"]) => String(rows.filter((v) => v.outcome === o).length);
      const issues = [
        ...new Set(rows.flatMap((v) => (v.outcome === "xfail" && v.issue ? [`#${v.issue}`] : []))),
      ];
      out(
        `${`${group} [${front}]`.padEnd(36)} ${String(rows.length).padStart(5)}  ${n("pass").padStart(4)}  ${n("fail").padStart(4)}  ${n("xfail").padStart(5)}  ${n("xpass").padStart(5)}  ${n("skip").padStart(4)}  ${issues.join(" ")}`,
      );
    }
  for (const v of verdicts.filter((x) => x.outcome === "skip"))
    out(`  skip  ${v.test} [${v.front}]: ${v.detail}`);
  for (const v of verdicts.filter((x) => x.outcome === "fail" || x.outcome === "xpass"))
    out(`  ${v.outcome.toUpperCase()}  ${v.test} [${v.front}]: ${v.detail}`);
}
