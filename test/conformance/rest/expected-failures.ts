/**
 * The `gateway-api-rest` tests Gatehouse does not pass yet, each with the issue that will make it pass. The
 * entries name tests, not cases (verdicts.ts): a listed test that passes fails the run until it is removed,
 * a test that fails unlisted fails it too, so the list can only shrink honestly.
 */
import type { Front } from "../../helpers/fronts.ts";

export interface RestExpectedFailure {
  readonly test: string;
  /** The issue whose work makes it pass (`issues show N`). */
  readonly issue: number;
  readonly reason: string;
  /** Only on this front; absent: both. */
  readonly front?: Front;
}

export function restExpectedFor(
  xfails: readonly RestExpectedFailure[],
  test: string,
  front: Front,
): RestExpectedFailure | undefined {
  return xfails.find((x) => x.test === test && (x.front === undefined || x.front === front));
}

/** An entry (none open now: every test passes on both fronts). */
export const x = (issue: number, test: string, reason: string): RestExpectedFailure => ({
  test,
  issue,
  reason,
});

export const restExpectedFailures: readonly RestExpectedFailure[] = [];
