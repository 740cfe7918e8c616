/**
 * Probes on which a front and nginx (or the two fronts) send the same bytes to different backends,
 * paths, bodies or fields, each with why that is accepted. The differential test fails on such a
 * difference not listed here, and on an entry here that no longer happens, so an entry cannot outlive
 * its cause. docs/http.md ("Differential run against nginx") reads each.
 */
import type { Pair } from "./run.ts";

export interface KnownDifference {
  readonly probe: string;
  readonly pairs: readonly Pair[];
  readonly reason: string;
  /** Happens on some runs only (a race in Bun.serve): not reported when it does not happen. */
  readonly intermittent?: boolean;
}

/** What Bun.serve does that our code cannot change (docs/http.md, written exceptions). */
const BUN_FRONT: readonly Pair[] = ["bun-nginx", "raw-bun"];

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    probe: "backslashes",
    pairs: ["raw-nginx", "bun-nginx"],
    reason:
      "Gatehouse reads \\ as / (as Bun.serve's URL parser does), routes /admin and forwards /admin: route and backend agree. nginx routes the literal path and forwards the \\ as sent",
  },
  {
    probe: "absolute-form, other authority",
    pairs: BUN_FRONT,
    reason: "Bun.serve hides the target as sent, so --front bun routes by Host (written exception)",
  },
  {
    probe: "absolute-form, app.example authority, other Host",
    pairs: BUN_FRONT,
    reason: "Bun.serve hides the target as sent, so --front bun routes by Host (written exception)",
  },
  {
    probe: "GET with a body",
    pairs: BUN_FRONT,
    reason:
      "Bun's fetch sends no body with a GET: read and dropped, never taken as a request (written exception)",
  },
  {
    probe: "GET whose body is a request for /admin",
    pairs: BUN_FRONT,
    reason:
      "as GET with a body: Bun.serve drops the body (the /admin in it reaches nothing); whether it forwards the GET before closing on the bytes that follow is a race",
    intermittent: true,
  },
];
