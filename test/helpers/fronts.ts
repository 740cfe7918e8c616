/**
 * Both fronts, one case list: an integration suite written once and run against the raw HTTP/1.1 front
 * (`--front raw`, the default) and Bun.serve (`--front bun`), as Hono runs one router suite against every
 * router. A difference between the fronts is a bug, or an exception written down in the case itself and
 * asserted as such (the case says what that front does), so the exception cannot outlive its cause.
 */
import { describe } from "bun:test";

/** What serves plain-HTTP listeners (`--front`). */
export type Front = "raw" | "bun";

export const FRONTS: readonly Front[] = ["raw", "bun"];

/** `suite` once per front, in a describe block titled `<title> [<front> front]`. */
export function forEachFront(title: string, suite: (front: Front) => void): void {
  for (const front of FRONTS) describe(`${title} [${front} front]`, () => suite(front));
}
