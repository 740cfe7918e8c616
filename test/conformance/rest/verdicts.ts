/**
 * A rest test's verdict from its items, against expected-failures.ts. The list names tests, not cases: a
 * listed test's failing items are XFAIL and its passing ones PASS (status checks the translator already
 * satisfies show as such); a listed test with nothing failing is XPASS, which fails the run until the entry
 * goes. An unlisted test with a failing item is FAIL.
 */
import type { Front } from "../../helpers/fronts.ts";
import type { CaseResult } from "../report.ts";
import type { Group, RestTest } from "./data.ts";
import type { RestExpectedFailure } from "./expected-failures.ts";

/** One item (status check or case) of a test and what went wrong ("" passed); `skip` for a whole test. */
export interface Item {
  readonly name: string;
  readonly detail: string;
  readonly skip?: boolean;
}
export interface TestVerdict {
  readonly group: Group;
  readonly test: string;
  readonly front: Front;
  readonly outcome: "pass" | "fail" | "xfail" | "xpass" | "skip";
  /** Why: the skip reason, the expected failure's issue and reason, or the first failing item. */
  readonly detail: string;
  readonly issue?: number;
}

export function verdictOf(
  test: RestTest,
  front: Front,
  items: readonly Item[],
  xfail: RestExpectedFailure | undefined,
): { verdict: TestVerdict; results: CaseResult[] } {
  // No `features`: the per-feature table stays the first file's; this suite has its group table.
  const base = { suite: "gateway-api-rest", front, test: test.name, level: test.level };
  const why = xfail ? `issue ${xfail.issue}: ${xfail.reason}` : "";
  const verdict = (outcome: TestVerdict["outcome"], detail: string): TestVerdict => ({
    group: test.group,
    test: test.name,
    front,
    outcome,
    detail,
    ...(xfail ? { issue: xfail.issue } : {}),
  });
  const skipped = items.find((i) => i.skip);
  if (skipped) {
    const outcome = xfail ? "xpass" : "skip";
    const detail = xfail ? `${skipped.detail}, yet listed in rest/expected-failures.ts` : skipped.detail;
    return { verdict: verdict(outcome, detail), results: [{ ...base, name: "(test)", outcome, detail }] };
  }
  const failing = items.filter((i) => i.detail !== "");
  const results: CaseResult[] = items.map((i) => ({
    ...base,
    name: i.name,
    outcome: i.detail === "" ? "pass" : xfail ? "xfail" : "fail",
    detail: i.detail && xfail ? `${why} — ${i.detail}` : i.detail,
  }));
  if (failing.length === 0 && xfail) {
    const detail = `passes now: remove it from rest/expected-failures.ts (${why})`;
    results.push({ ...base, name: "(expected failure)", outcome: "xpass", detail });
    return { verdict: verdict("xpass", detail), results };
  }
  if (failing.length === 0) return { verdict: verdict("pass", ""), results };
  const first = `${failing.length} of ${items.length} items fail, e.g. ${failing[0]?.name}: ${failing[0]?.detail}`;
  return { verdict: verdict(xfail ? "xfail" : "fail", xfail ? why : first), results };
}
