/**
 * Whether a user-supplied regular expression (HTTPRoute path, header and query matches) can run on every
 * request. The data plane runs them with its own linear-time engine (src/proxy/match/regex), so there is
 * no catastrophic backtracking to guard against; what is refused is what that engine cannot run or would
 * read differently from RE2 or JavaScript: backreferences, lookarounds, inline flags (but for a leading
 * `(?i)`, the whole pattern case-insensitive), `\b`, `\p{…}`, POSIX classes, counts above 1000, patterns
 * that expand past the engine's size bound. Validating with the engine's own compiler means what
 * translates is exactly what runs.
 * Returns undefined when the pattern is accepted, else why not (reported as UnsupportedValue).
 */
import { regexError } from "../../proxy/match/regex/regex.ts";

export function regexProblem(pattern: string): string | undefined {
  if (typeof pattern !== "string") return "must not be empty";
  return regexError(pattern);
}
