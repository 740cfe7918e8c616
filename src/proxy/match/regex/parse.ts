/**
 * Parser for the regular-expression subset HTTPRoute authors write (RE2-like, with JavaScript's meaning
 * for everything it accepts, since matching used to be `new RegExp("^(?:p)$")`). Constructs a linear-time
 * engine cannot run, and ones whose meaning differs between RE2 and JavaScript, are refused with a reason
 * rather than guessed at: a route author learns at translation time, not from a surprising match.
 */
import { foldCase } from "./casefold.ts";
import { classEscape, DOT, negate, normalise, type Ranges } from "./charset.ts";

export type Ast =
  | { readonly kind: "set"; readonly ranges: Ranges }
  | { readonly kind: "cat"; readonly items: readonly Ast[] }
  | { readonly kind: "alt"; readonly items: readonly Ast[] }
  /**
   * `max` is -1 when unbounded. Capture groups `firstGroup`…`lastGroup` (none when last < first) lie
   * inside `sub`: JavaScript clears them at the start of every iteration.
   */
  | {
      readonly kind: "rep";
      readonly sub: Ast;
      readonly min: number;
      readonly max: number;
      readonly greedy: boolean;
      readonly firstGroup: number;
      readonly lastGroup: number;
    }
  /** Capture group number `index` (from 1, counted by opening parenthesis as JavaScript counts). */
  | { readonly kind: "group"; readonly sub: Ast; readonly index: number }
  | { readonly kind: "bol" }
  | { readonly kind: "eol" };

export interface Parsed {
  readonly ast: Ast;
  readonly groupCount: number;
  /** Name of each group by number (index 0, the whole match, has none). */
  readonly groupNames: readonly (string | undefined)[];
}

/** Largest count in `{n,m}`; larger ones would only inflate the automaton. */
export const MAX_REPEAT = 1000;
export const MAX_PATTERN_LENGTH = 1024;

export class RegexSyntaxError extends Error {}

/**
 * RE2's and PCRE's flag for a whole case-insensitive pattern, accepted at the very start only: users of
 * Envoy-based gateways write it in HTTPRoute patterns, and it reads the same everywhere. Anywhere else an
 * inline flag would change part of a pattern, which RegExp cannot say, so it is refused.
 */
export const LEADING_IGNORE_CASE = "(?i)";

/**
 * The pattern's syntax tree, its sets already widened by case folding when `ignoreCase` (or when the
 * pattern starts with `(?i)`); throws RegexSyntaxError with a reason phrased to follow `value "…"`.
 */
export function parseRegex(pattern: string, ignoreCase = false): Parsed {
  if (pattern === "") throw new RegexSyntaxError("must not be empty");
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new RegexSyntaxError(`must be no more than ${MAX_PATTERN_LENGTH} characters`);
  const flagged = pattern.startsWith(LEADING_IGNORE_CASE);
  if (flagged && pattern.length === LEADING_IGNORE_CASE.length)
    throw new RegexSyntaxError("must have a pattern after (?i)");
  const p = new Parser(pattern, ignoreCase || flagged);
  if (flagged) p.pos = LEADING_IGNORE_CASE.length;
  const ast = p.alternation();
  if (p.pos < pattern.length) p.fail("has an unmatched )");
  return { ast, groupCount: p.groupNames.length - 1, groupNames: p.groupNames };
}

const simpleEscapes: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

class Parser {
  pos = 0;
  readonly groupNames: (string | undefined)[] = [undefined];
  constructor(
    private readonly src: string,
    private readonly ignoreCase: boolean,
  ) {}

  private set(ranges: Ranges): Ast {
    return { kind: "set", ranges: this.ignoreCase ? foldCase(ranges) : ranges };
  }

  fail(why: string): never {
    throw new RegexSyntaxError(`is not a supported regular expression: ${why} (at offset ${this.pos})`);
  }

  alternation(): Ast {
    const items = [this.sequence()];
    while (this.src[this.pos] === "|") {
      this.pos++;
      items.push(this.sequence());
    }
    return items.length === 1 ? (items[0] as Ast) : { kind: "alt", items };
  }

  private sequence(): Ast {
    const items: Ast[] = [];
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined || c === "|" || c === ")") break;
      const firstGroup = this.groupNames.length;
      const atom = this.atom();
      const q = this.quantifier();
      if (!q) {
        items.push(atom);
        continue;
      }
      // JavaScript refuses `^*` but takes `(^)*`; repeating an empty-width test is harmless to the NFA.
      if (c === "^" || c === "$") this.fail("an anchor cannot be repeated");
      const greedy = this.src[this.pos] !== "?";
      if (!greedy) this.pos++;
      if (this.quantifierAt(this.pos))
        this.fail("a quantifier cannot follow another (possessive or doubled)");
      const lastGroup = this.groupNames.length - 1;
      items.push({ kind: "rep", sub: atom, min: q.min, max: q.max, greedy, firstGroup, lastGroup });
    }
    return items.length === 1 ? (items[0] as Ast) : { kind: "cat", items };
  }

  private quantifier(): { min: number; max: number } | undefined {
    const q = this.quantifierAt(this.pos);
    if (q) this.pos = q.end;
    return q;
  }

  /** A quantifier starting at `i`; a `{` that does not form one is a literal, as in JavaScript and RE2. */
  private quantifierAt(i: number): { min: number; max: number; end: number } | undefined {
    const c = this.src[i];
    if (c === "*") return { min: 0, max: -1, end: i + 1 };
    if (c === "+") return { min: 1, max: -1, end: i + 1 };
    if (c === "?") return { min: 0, max: 1, end: i + 1 };
    if (c !== "{") return undefined;
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(i, i + 24));
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? -1 : Number(m[3]);
    if (min > MAX_REPEAT || max > MAX_REPEAT)
      throw new RegexSyntaxError(`must not repeat more than ${MAX_REPEAT} times`);
    if (max !== -1 && max < min) this.fail("numbers out of order in {} quantifier");
    return { min, max, end: i + m[0].length };
  }

  private atom(): Ast {
    const c = this.src[this.pos] as string;
    if (this.quantifierAt(this.pos)) this.fail("nothing to repeat");
    this.pos++;
    switch (c) {
      case "(":
        return this.group();
      case "[":
        return { kind: "set", ranges: this.charClass() };
      case ".":
        return this.set(DOT);
      case "^":
        return { kind: "bol" };
      case "$":
        return { kind: "eol" };
      case "\\": {
        const e = this.escape(false);
        return this.set(typeof e === "number" ? [e, e] : e);
      }
      default:
        return this.set([c.charCodeAt(0), c.charCodeAt(0)]);
    }
  }

  private group(): Ast {
    const rest = this.src.slice(this.pos, this.pos + 40);
    let index = -1;
    if (rest.startsWith("?")) {
      if (/^\?(=|!|<=|<!)/.test(rest)) throw new RegexSyntaxError("must not use lookahead or lookbehind");
      if (rest.startsWith("?P=")) throw new RegexSyntaxError("must not use backreferences");
      const opener = /^\?(:|P?<([A-Za-z_][A-Za-z0-9_]*)>)/.exec(rest);
      if (!opener)
        throw new RegexSyntaxError(
          "must not use inline flags (other than one (?i) at the very start) or other (? groups",
        );
      this.pos += opener[0].length;
      // Named groups are numbered too, as in JavaScript; so is RE2's and PCRE's (?P<name>…).
      if (opener[2] !== undefined) index = this.groupNames.push(opener[2]) - 1;
    } else index = this.groupNames.push(undefined) - 1;
    const inner = this.alternation();
    if (this.src[this.pos] !== ")") this.fail("missing )");
    this.pos++;
    return index < 0 ? inner : { kind: "group", sub: inner, index };
  }

  /** After `[`: the class's set, negation applied. */
  private charClass(): Ranges {
    const negated = this.src[this.pos] === "^";
    if (negated) this.pos++;
    // JavaScript reads [] and [^] as "nothing" and "anything", RE2 as a literal ]: too easy to misread.
    if (this.src[this.pos] === "]") this.fail("empty character class [] or [^]");
    const ranges: number[] = [];
    while (this.src[this.pos] !== "]") {
      if (this.pos >= this.src.length) this.fail("missing ]");
      const lo = this.classAtom();
      if (this.src[this.pos] === "-" && this.src[this.pos + 1] !== "]" && this.pos + 1 < this.src.length) {
        this.pos++;
        const hi = this.classAtom();
        if (typeof lo !== "number" || typeof hi !== "number")
          this.fail("a class escape like \\d cannot be a range end");
        if (lo > hi) this.fail("range out of order in character class");
        ranges.push(lo, hi);
      } else if (typeof lo === "number") ranges.push(lo, lo);
      else ranges.push(...lo);
    }
    this.pos++;
    // Folded before negating: JavaScript negates the match of the folded class, so [^a] refuses A too.
    const set = this.ignoreCase ? foldCase(normalise(ranges)) : normalise(ranges);
    return negated ? negate(set) : set;
  }

  private classAtom(): number | Ranges {
    const c = this.src[this.pos] as string;
    if (c === "[" && this.src[this.pos + 1] === ":")
      this.fail("POSIX classes like [[:digit:]] are not supported; use \\d, \\w, \\s or a range");
    this.pos++;
    if (c !== "\\") return c.charCodeAt(0);
    if (this.src[this.pos] === "b") {
      this.pos++;
      return 8; // backspace inside a class, in both JavaScript and RE2
    }
    return this.escape(true);
  }

  /** After `\`: a code unit, or a set for `\d \w \s \D \W \S`. */
  private escape(inClass: boolean): number | Ranges {
    const c = this.src[this.pos];
    if (c === undefined) this.fail("\\ at end of pattern");
    this.pos++;
    const set = classEscape(c);
    if (set) return set;
    const simple = simpleEscapes[c];
    if (simple !== undefined) return simple;
    if (c === "0") {
      if (/[0-9]/.test(this.src[this.pos] ?? "")) this.fail("octal escapes are not supported");
      return 0;
    }
    if (/[1-9]/.test(c)) {
      if (inClass) this.fail("octal escapes are not supported");
      throw new RegexSyntaxError("must not use backreferences");
    }
    if (c === "k") throw new RegexSyntaxError("must not use backreferences");
    if (c === "b" || c === "B") this.fail("word boundaries \\b and \\B are not supported");
    if (c === "p" || c === "P") this.fail("Unicode property escapes \\p{…} are not supported");
    if (c === "x") return this.hex(2, "\\x needs two hex digits");
    if (c === "u") return this.hex(4, "\\u needs four hex digits (\\u{…} is not supported)");
    if (c === "c") {
      const letter = this.src[this.pos] ?? "";
      if (!/[A-Za-z]/.test(letter)) this.fail("\\c needs a letter");
      this.pos++;
      return letter.charCodeAt(0) % 32;
    }
    // Other letter escapes mean different things in RE2 (\A, \z, \Q) and JavaScript (a literal letter).
    if (/[A-Za-z]/.test(c)) this.fail(`unknown escape \\${c}`);
    return c.charCodeAt(0);
  }

  private hex(digits: number, why: string): number {
    const h = this.src.slice(this.pos, this.pos + digits);
    if (h.length !== digits || !/^[0-9A-Fa-f]+$/.test(h)) this.fail(why);
    this.pos += digits;
    return Number.parseInt(h, 16);
  }
}
