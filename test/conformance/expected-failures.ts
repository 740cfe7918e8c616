/**
 * Conformance runs that are known not to pass yet, each with the reason and the issue that will fix it.
 * The runner reports them as XFAIL and does not fail on them; if one starts passing, the runner fails
 * until it is removed from this list, so the list can only shrink honestly.
 */
export interface ExpectedFailure {
  readonly suite: "ingress" | "gateway-api";
  /** Test or feature name as printed in the table. */
  readonly test: string;
  /** Substring of the case name; "" for every case of the test. */
  readonly caseContains: string;
  readonly reason: string;
}

export const expectedFailures: readonly ExpectedFailure[] = [
  {
    suite: "ingress",
    test: "host_rules",
    caseContains: "TLS traffic",
    reason: "TLS termination is not built yet (issue: TLS termination)",
  },
];
