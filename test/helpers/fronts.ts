/**
 * Both fronts, one case list: an integration suite written once and run against the raw HTTP/1.1 front
 * (`--front raw`, the default) and Bun.serve (`--front bun`), as Hono runs one router suite against every
 * router. A case that cannot hold on one front is skipped there with `skipOn(front, "bun", reason)`, so
 * every difference is written down where it is tested.
 */
import { describe, test } from "bun:test";

/** What serves plain-HTTP listeners (`--front`). */
export type Front = "raw" | "bun";

export const FRONTS: readonly Front[] = ["raw", "bun"];

/** `suite` once per front, in a describe block titled `<title> [<front> front]`. */
export function forEachFront(title: string, suite: (front: Front) => void): void {
  for (const front of FRONTS) describe(`${title} [${front} front]`, () => suite(front));
}

/** One test case, as `test` takes it. */
type Case = (name: string, fn: () => Promise<unknown> | undefined, timeout?: number) => void;

/**
 * `test` on this front, or skipped when it is the front named, with the reason in the test's title so
 * the run's report says why. Use only for a written exception: a difference is otherwise a bug.
 */
export function skipOn(front: Front, skipped: Front, reason: string): Case {
  if (front !== skipped) return test;
  return (name, fn, timeout) =>
    test.skip(`${name} (skipped on the ${skipped} front: ${reason})`, fn, timeout);
}
