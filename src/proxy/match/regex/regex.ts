/**
 * The data plane's regular expressions (HTTPRoute path, header and query matches): parsed by our own
 * parser, compiled to an NFA and run by a lazily built DFA, so every match costs O(pattern × input)
 * whatever the pattern and input. JavaScript's RegExp backtracks, and no static check we tried could
 * tell all its exponential or high-polynomial cases apart from safe ones.
 *
 * Semantics are those of `new RegExp("^(?:" + pattern + ")$")` (no flags: UTF-16 code units, `.` stops
 * at line terminators, `^`/`$` only at the ends of the value) for every pattern we accept. The translator
 * validates with the same function, so what is Accepted is exactly what runs.
 */
import { buildNfa } from "./nfa.ts";
import { parseRegex, RegexSyntaxError } from "./parse.ts";
import { LazyDfa } from "./run.ts";

/** A whole-value matcher; `test` has RegExp's shape so callers need not care which engine runs. */
export interface ValueRegex {
  test(value: string): boolean;
}

export type Compiled =
  | { readonly regex: ValueRegex; readonly error?: undefined }
  | { readonly regex?: undefined; readonly error: string };

/**
 * Compiled patterns, kept across applies: every apply translates and compiles the whole configuration,
 * and the translator's check compiles each pattern too, so without this each regex route was built
 * twice per apply (the NFA construction showed among the largest costs of an apply at 10k routes). Two
 * generations bound it: when the newer holds CACHE_SIZE patterns it becomes the older and the oldest
 * is dropped, so patterns no longer configured age out. Sharing a compiled pattern between routes (and
 * tables) is safe: its lazily built DFA states depend only on the pattern.
 */
export const CACHE_SIZE = 4096;
let newer = new Map<string, Compiled>();
let older = new Map<string, Compiled>();

/** Compiles `pattern`, anchored on the whole value; `error` says why it is refused. */
export function compileRegex(pattern: string): Compiled {
  let c = newer.get(pattern);
  if (c !== undefined) return c;
  c = older.get(pattern) ?? build(pattern);
  if (newer.size >= CACHE_SIZE) {
    older = newer;
    newer = new Map();
  }
  newer.set(pattern, c);
  return c;
}

function build(pattern: string): Compiled {
  try {
    return { regex: new LazyDfa(buildNfa(parseRegex(pattern))) };
  } catch (err) {
    if (err instanceof RegexSyntaxError) return { error: err.message };
    // A stack overflow on absurd nesting is a refusal too, never a crash of the translator.
    if (err instanceof RangeError) return { error: "is nested too deeply" };
    throw err;
  }
}

/** Why `pattern` is refused, or undefined when it compiles (the translator's check). */
export function regexError(pattern: string): string | undefined {
  return compileRegex(pattern).error;
}
