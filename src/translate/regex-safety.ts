/**
 * Whether a user-supplied regular expression (HTTPRoute path, header and query matches) is safe to run
 * on every request. JavaScript's engine backtracks, so a pattern like `(a+)+$` can take exponential time
 * on a crafted path. We refuse, rather than try to rewrite, every construct that can backtrack
 * catastrophically or that a linear-time (RE2-like) engine cannot run:
 * - backreferences (`\1`, `\k<name>`) and lookarounds (`(?=`, `(?!`, `(?<=`, `(?<!`);
 * - a repeated group (`*`, `+`, `{n,}`, `{n,m}` with m > 1) that itself contains a repetition: `(a+)+`, `(a*b)*`;
 * - a repeated group with alternation, unless every alternative is a plain literal and no two start with
 *   the same character (`(foo|bar)+` is fine, `(a|ab)+` is not);
 * - more than 4 unbounded repetitions in the whole pattern (`.*a.*b.*c.*d.*`: polynomial blow-up),
 *   counted repetition bounds above 1000, patterns longer than 1024 characters;
 * - anything `new RegExp` refuses (the syntax check, no flags: inline flags like `(?i)` are refused).
 * Returns undefined when safe, else why not.
 */
export function regexProblem(pattern: string): string | undefined {
  if (typeof pattern !== "string" || pattern === "") return "must not be empty";
  if (pattern.length > 1024) return "must be no more than 1024 characters";
  try {
    new RegExp(pattern);
  } catch (err) {
    return `is not a valid regular expression: ${(err as Error).message}`;
  }
  return scan(pattern);
}

interface Frame {
  readonly start: number;
  repeats: boolean;
  alternation: boolean;
}

const literal = /^[A-Za-z0-9/_~%:@!,;='&-]*$/;
const maxUnbounded = 4;

function scan(p: string): string | undefined {
  const stack: Frame[] = [{ start: 0, repeats: false, alternation: false }];
  let unbounded = 0;
  /** The group that just closed, when the previous atom is a group (a quantifier applies to it). */
  let lastGroup: (Frame & { readonly content: string }) | undefined;
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    const top = stack[stack.length - 1] as Frame;
    const prevGroup = lastGroup;
    lastGroup = undefined;
    if (c === "\\") {
      const next = p[i + 1] ?? "";
      if (/[1-9]/.test(next) || (next === "k" && p[i + 2] === "<")) return "must not use backreferences";
      i++;
      continue;
    }
    if (c === "[") {
      i = classEnd(p, i);
      continue;
    }
    if (c === "(") {
      if (/^\(\?(=|!|<=|<!)/.test(p.slice(i))) return "must not use lookahead or lookbehind";
      stack.push({ start: i, repeats: false, alternation: false });
      continue;
    }
    if (c === ")") {
      const frame = stack.pop() as Frame;
      const parent = stack[stack.length - 1] as Frame;
      parent.repeats ||= frame.repeats;
      parent.alternation ||= frame.alternation;
      lastGroup = { ...frame, content: groupBody(p.slice(frame.start, i + 1)) };
      continue;
    }
    if (c === "|") {
      top.alternation = true;
      continue;
    }
    const q = quantifier(p, i);
    if (!q) continue;
    if (q.max !== undefined && q.max > 1000) return "must not repeat more than 1000 times";
    if (q.max === undefined) unbounded++;
    if (unbounded > maxUnbounded) return `must not have more than ${maxUnbounded} unbounded repetitions`;
    const repeating = q.max === undefined || q.max > 1;
    if (repeating && prevGroup) {
      if (prevGroup.repeats) return "must not nest repetitions, e.g. (a+)+";
      if (prevGroup.alternation && !distinctLiterals(prevGroup.content)) {
        return "must not repeat a group whose alternatives are not distinct literals, e.g. (a|ab)+";
      }
    }
    if (repeating) top.repeats = true;
    i = q.end;
    if (p[i + 1] === "?") i++; // lazy quantifier
  }
  return undefined;
}

/** Index of the `]` closing the class opened at `i`. */
function classEnd(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === "^") j++;
  if (p[j] === "]") j++;
  for (; j < p.length; j++) {
    if (p[j] === "\\") j++;
    else if (p[j] === "]") return j;
  }
  return p.length;
}

/** A quantifier starting at `i`: its bounds and last index. */
function quantifier(p: string, i: number): { max: number | undefined; end: number } | undefined {
  const c = p[i];
  if (c === "*" || c === "+") return { max: undefined, end: i };
  if (c === "?") return { max: 1, end: i };
  if (c !== "{") return undefined;
  const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
  if (!m) return undefined;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === "" ? undefined : Number(m[3]);
  if (min > 1000) return { max: min, end: i + m[0].length - 1 };
  return { max, end: i + m[0].length - 1 };
}

function groupBody(group: string): string {
  const inner = group.slice(1, -1);
  const named = /^\?<[A-Za-z_][A-Za-z0-9_]*>/.exec(inner);
  if (named) return inner.slice(named[0].length);
  return inner.startsWith("?:") ? inner.slice(2) : inner;
}

function distinctLiterals(body: string): boolean {
  const alts = body.split("|");
  if (alts.some((a) => a === "" || !literal.test(a))) return false;
  const firsts = new Set(alts.map((a) => a[0]));
  return firsts.size === alts.length;
}
