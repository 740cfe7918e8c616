/**
 * Conformance runs that are known not to pass yet, each with the reason and the issue that will fix it.
 * The runner reports them as XFAIL and does not fail on them; if one starts passing, the runner fails
 * until it is removed from this list, so the list can only shrink honestly.
 */
import type { Front } from "../helpers/fronts.ts";
export interface ExpectedFailure {
  readonly suite: "ingress" | "gateway-api";
  /** Test or feature name as printed in the table. */
  readonly test: string;
  /** Substring of the case name; "" for every case of the test. */
  readonly caseContains: string;
  /** Only on this front (a difference between the fronts is a bug or a written exception); absent: both. */
  readonly front?: Front;
  readonly reason: string;
}

/** An entry of the gateway-api suite (none open now: every case passes). */
export const gw = (test: string, caseContains: string, reason: string): ExpectedFailure => ({
  suite: "gateway-api",
  test,
  caseContains,
  reason,
});

export const expectedFailures: readonly ExpectedFailure[] = [];
