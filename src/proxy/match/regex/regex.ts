/**
 * The data plane's regular expressions (HTTPRoute path, header and query matches, rewrite targets):
 * parsed by our own parser, compiled to an NFA and run by a lazily built DFA (`test`) or, when capture
 * groups are wanted, a Pike VM (`exec`), so every match costs O(pattern × input) whatever the pattern and
 * input. JavaScript's RegExp backtracks, and no static check we tried could tell all its exponential or
 * high-polynomial cases apart from safe ones.
 *
 * Semantics are those of `new RegExp("^(?:" + pattern + ")$")` (no flags: UTF-16 code units, `.` stops
 * at line terminators, `^`/`$` only at the ends of the value; with `ignoreCase` or a leading `(?i)`, the
 * `i` flag) for every pattern we accept, `exec` included. The translator validates with the same function, so what is
 * Accepted is exactly what runs.
 */
import { buildNfa, checkCaptureWork } from "./nfa.ts";
import { type Parsed, parseRegex, RegexSyntaxError } from "./parse.ts";

export { LEADING_IGNORE_CASE } from "./parse.ts";

import { PikeVm } from "./pike.ts";
import { LazyDfa } from "./run.ts";

/** A whole-value matcher; `test` has RegExp's shape so callers need not care which engine runs. */
export interface ValueRegex {
  test(value: string): boolean;
}

/** A whole-value matcher that also extracts capture groups (e.g. for a rewrite target's `$1`). */
export interface CaptureRegex extends ValueRegex {
  /**
   * What `new RegExp("^(?:p)$").exec(value)` holds, as a plain array: the value, then each group by
   * number (undefined when it took no part); null when `value` does not match.
   */
  exec(value: string): (string | undefined)[] | null;
  /** Number of capture groups, named ones included. */
  readonly groupCount: number;
  /** Name of each group by number (undefined for unnamed ones and for index 0, the whole value). */
  readonly groupNames: readonly (string | undefined)[];
}

export interface RegexOptions {
  /** Case-insensitive, as RegExp's `i` flag (nginx's `~*`). */
  readonly ignoreCase?: boolean;
}

export type Compiled =
  | { readonly regex: CaptureRegex; readonly error?: undefined }
  | { readonly regex?: undefined; readonly error: string };

/**
 * `test` is LazyDfa's own method (the hot path: every request on a regex route). The capture program is
 * built on the first `exec`, so patterns only ever tested cost nothing more; whether it stays within
 * bounds is checked at compile time, so `exec` cannot fail later.
 */
class Regex extends LazyDfa implements CaptureRegex {
  private pike: PikeVm | undefined;

  constructor(private readonly parsed: Parsed) {
    super(buildNfa(parsed.ast));
    checkCaptureWork(parsed.ast, parsed.groupCount);
  }

  get groupCount(): number {
    return this.parsed.groupCount;
  }

  get groupNames(): readonly (string | undefined)[] {
    return this.parsed.groupNames;
  }

  exec(value: string): (string | undefined)[] | null {
    const groups = this.parsed.groupCount;
    this.pike ??= new PikeVm(buildNfa(this.parsed.ast, true), 2 * groups);
    const slots = this.pike.run(value);
    if (slots === null) return null;
    const result: (string | undefined)[] = [value];
    for (let g = 0; g < groups; g++) {
      const start = slots[2 * g] as number;
      const end = slots[2 * g + 1] as number;
      result.push(start >= 0 && end >= 0 ? value.slice(start, end) : undefined);
    }
    return result;
  }
}

/**
 * Compiled patterns, kept across applies: every apply translates and compiles the whole configuration,
 * and the translator's check compiles each pattern too, so without this each regex route was built
 * twice per apply (the NFA construction showed among the largest costs of an apply at 10k routes). Two
 * generations bound it: when the newer holds CACHE_SIZE patterns it becomes the older and the oldest
 * is dropped, so patterns no longer configured age out. Sharing a compiled pattern between routes (and
 * tables) is safe: its lazily built DFA states depend only on the pattern and flags. Keys carry the flag
 * as a first character, so no pattern's key can equal another's with the other flag.
 */
export const CACHE_SIZE = 4096;
let newer = new Map<string, Compiled>();
let older = new Map<string, Compiled>();

/** Compiles `pattern`, anchored on the whole value; `error` says why it is refused. */
export function compileRegex(pattern: string, options?: RegexOptions): Compiled {
  const ignoreCase = options?.ignoreCase === true;
  const key = (ignoreCase ? "i" : "-") + pattern;
  let c = newer.get(key);
  if (c !== undefined) return c;
  c = older.get(key) ?? build(pattern, ignoreCase);
  if (newer.size >= CACHE_SIZE) {
    older = newer;
    newer = new Map();
  }
  newer.set(key, c);
  return c;
}

function build(pattern: string, ignoreCase: boolean): Compiled {
  try {
    return { regex: new Regex(parseRegex(pattern, ignoreCase)) };
  } catch (err) {
    if (err instanceof RegexSyntaxError) return { error: err.message };
    // A stack overflow on absurd nesting is a refusal too, never a crash of the translator.
    if (err instanceof RangeError) return { error: "is nested too deeply" };
    throw err;
  }
}

/** Why `pattern` is refused, or undefined when it compiles (the translator's check). */
export function regexError(pattern: string, options?: RegexOptions): string | undefined {
  return compileRegex(pattern, options).error;
}
