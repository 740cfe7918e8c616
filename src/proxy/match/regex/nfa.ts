/**
 * Thompson NFA over character classes. Nodes live in typed arrays so the matcher's inner loops touch
 * no objects. Code units are first mapped to equivalence classes (code units no set of the pattern tells
 * apart share a class), so a DFA state needs one transition slot per class instead of per code unit.
 *
 * A pattern compiles to two programs. The one `test` runs ignores groups and priorities. The capture
 * program (built only when `exec` is first asked for) adds what JavaScript's backtracking semantics
 * need on top: positions saved at group boundaries, groups cleared at each iteration of a repetition,
 * and a guard that kills an optional iteration that consumed nothing; split successors are in priority
 * order (`out` first), lazy quantifiers preferring to leave.
 */
import { contains, type Ranges } from "./charset.ts";
import { type Ast, RegexSyntaxError } from "./parse.ts";

export const OP_CHAR = 0;
export const OP_SPLIT = 1;
export const OP_JUMP = 2;
/** Passes only at offset 0 (`^`). */
export const OP_BOL = 3;
/** Passes only at the end of the input (`$`). */
export const OP_EOL = 4;
export const OP_MATCH = 5;
/** Records the position in capture slot `arg`. */
export const OP_SAVE = 6;
/**
 * Clears the slots of groups `arg >> 16` to `arg & 0xffff` (a pattern has far fewer than 65,536), as
 * JavaScript does when a repetition starts an iteration.
 */
export const OP_RESET = 7;
/** Starts an optional iteration whose body could match empty: nothing consumed since, so far. */
export const OP_BEGIN = 8;
/** Ends such an iteration; a path that consumed nothing since its BEGIN dies (ECMAScript RepeatMatcher). */
export const OP_END = 9;

/**
 * Most nodes a pattern may compile to: a match costs up to (nodes × input length) steps, so this bounds
 * the worst case (8 KB of input × 20k nodes stays well under a second even on the slow path).
 */
export const MAX_NODES = 20_000;

export interface Nfa {
  readonly op: Uint8Array;
  readonly out: Int32Array;
  /** Second successor of a SPLIT; the set index of a CHAR. */
  readonly arg: Int32Array;
  readonly start: number;
  /** Number of code-unit classes. */
  readonly classes: number;
  /** Class of each ASCII code unit. */
  readonly asciiClass: Uint16Array;
  /** Starts of the regions above ASCII (sorted) and each region's class, for a binary search. */
  readonly wideStarts: Int32Array;
  readonly wideClass: Uint16Array;
  /** `hit[set * classes + k]`: whether set `set` contains class `k`. */
  readonly hit: Uint8Array;
}

/** Sizes of a program, in nodes and in what bounds the Pike VM's work per code unit (see pike.ts). */
export interface ProgramSize {
  readonly nodes: number;
  /** CHAR nodes: the threads a position's list can hold, each with its own slots. */
  readonly sets: number;
  /** Slots written by SAVE and RESET nodes, each write undone once. */
  readonly writes: number;
}

/**
 * Size of the program `ast` compiles to (with the final MATCH), computed before building so huge
 * repeats are refused cheaply; with `captures`, of the capture program.
 */
export function nodeCount(ast: Ast, captures = false): ProgramSize {
  const size = (a: Ast): [nodes: number, sets: number, writes: number] => {
    switch (a.kind) {
      case "set":
        return [1, 1, 0];
      case "bol":
      case "eol":
        return [1, 0, 0];
      case "group": {
        const [n, s, w] = size(a.sub);
        return captures ? [n + 2, s, w + 2] : [n, s, w];
      }
      case "cat":
      case "alt": {
        const total: [number, number, number] = [a.kind === "alt" ? a.items.length - 1 : 0, 0, 0];
        for (const x of a.items) {
          const [n, s, w] = size(x);
          total[0] += n;
          total[1] += s;
          total[2] += w;
        }
        return total;
      }
      case "rep": {
        const [n, s, w] = size(a.sub);
        const copies = a.max === -1 ? a.min + 1 : a.max;
        const optional = a.max === -1 ? 1 : a.max - a.min;
        const clears = captures && a.lastGroup >= a.firstGroup;
        const reset = clears ? 1 : 0;
        const cleared = clears ? 2 * (a.lastGroup - a.firstGroup + 1) : 0;
        const guards = captures && nullable(a.sub) ? 2 : 0;
        const times = (x: number) => Math.min(x * copies, Number.MAX_SAFE_INTEGER);
        return [times(n + reset) + optional * (1 + guards), times(s), times(w + cleared)];
      }
    }
  };
  const [nodes, sets, writes] = size(ast);
  return { nodes: nodes + 1, sets, writes };
}

/**
 * Bound on the capture program's work per code unit of input: each node visited (twice at most), each
 * write and its undo, and each thread's slots copied. Generous next to what route patterns need (tens
 * or hundreds), it refuses only many capture groups inside large repetitions, where one match could
 * otherwise take seconds.
 */
export const MAX_CAPTURE_WORK = 100_000;

/** Refuses a pattern whose capture program would exceed MAX_CAPTURE_WORK. */
export function checkCaptureWork(ast: Ast, groupCount: number): void {
  const { nodes, sets, writes } = nodeCount(ast, true);
  const work = nodes + writes + (sets + 1) * 2 * groupCount;
  if (work > MAX_CAPTURE_WORK)
    throw new RegexSyntaxError(
      `has too many capture groups inside repetitions (${work} > ${MAX_CAPTURE_WORK} steps a character); ` +
        "use (?:…) for groups that need not capture, or smaller counts",
    );
}

const nullableMemo = new WeakMap<Ast, boolean>();

/** Whether `a` can finish without consuming (anchors count as empty: a harmless overestimate). */
function nullable(a: Ast): boolean {
  let known = nullableMemo.get(a);
  if (known !== undefined) return known;
  switch (a.kind) {
    case "set":
      known = false;
      break;
    case "bol":
    case "eol":
      known = true;
      break;
    case "group":
      known = nullable(a.sub);
      break;
    case "cat":
      known = a.items.every(nullable);
      break;
    case "alt":
      known = a.items.some(nullable);
      break;
    case "rep":
      known = a.min === 0 || nullable(a.sub);
  }
  nullableMemo.set(a, known);
  return known;
}

/** Builds the program `test` runs, or with `captures` the one `exec` runs (see the top of the file). */
export function buildNfa(ast: Ast, captures = false): Nfa {
  const total = nodeCount(ast).nodes;
  if (total > MAX_NODES)
    throw new RegexSyntaxError(
      `is too large once its repetitions are expanded (${total} > ${MAX_NODES} states); use smaller counts`,
    );
  const op: number[] = [];
  const out: number[] = [];
  const arg: number[] = [];
  const sets: Ranges[] = [];
  const setIndex = new Map<string, number>();
  const node = (o: number, next: number, a = -1): number => {
    op.push(o);
    out.push(next);
    arg.push(a);
    return op.length - 1;
  };
  const setOf = (r: Ranges): number => {
    const key = r.join(",");
    let i = setIndex.get(key);
    if (i === undefined) {
      i = sets.push(r) - 1;
      setIndex.set(key, i);
    }
    return i;
  };
  // Built back to front: each piece is compiled knowing where it continues, so copies are trivial.
  const emit = (a: Ast, next: number): number => {
    switch (a.kind) {
      case "set":
        return node(OP_CHAR, next, setOf(a.ranges));
      case "bol":
        return node(OP_BOL, next);
      case "eol":
        return node(OP_EOL, next);
      case "group":
        if (!captures) return emit(a.sub, next);
        return node(OP_SAVE, emit(a.sub, node(OP_SAVE, next, 2 * a.index - 1)), 2 * a.index - 2);
      case "cat":
        return a.items.reduceRight((n, x) => emit(x, n), next);
      case "alt": {
        let start = emit(a.items[a.items.length - 1] as Ast, next);
        for (let i = a.items.length - 2; i >= 0; i--)
          start = node(OP_SPLIT, emit(a.items[i] as Ast, next), start);
        return start;
      }
      case "rep":
        return emitRepeat(a, next);
    }
  };
  const emitRepeat = (a: Extract<Ast, { kind: "rep" }>, next: number): number => {
    const clears = captures && a.lastGroup >= a.firstGroup;
    const guarded = captures && nullable(a.sub);
    // One iteration continuing at `then`; an optional one must consume something to count.
    const iteration = (then: number, optional: boolean): number => {
      let start = optional && guarded ? node(OP_BEGIN, emit(a.sub, node(OP_END, then))) : emit(a.sub, then);
      if (clears) start = node(OP_RESET, start, (a.firstGroup << 16) | a.lastGroup);
      return start;
    };
    // Greedy tries another iteration before leaving; lazy leaves first.
    const choice = (again: number, loop: number) => {
      if (a.greedy) {
        out[loop] = again;
        arg[loop] = next;
      } else {
        out[loop] = next;
        arg[loop] = again;
      }
    };
    let cur = next;
    if (a.max === -1) {
      const loop = node(OP_SPLIT, -1, -1);
      choice(iteration(loop, true), loop);
      cur = loop;
    } else {
      // x{0,k} as (x(x(…)?)?)?: each optional copy either continues to a deeper copy or leaves.
      for (let i = a.min; i < a.max; i++) {
        const again = iteration(cur, true);
        cur = node(OP_SPLIT, -1, -1);
        choice(again, cur);
      }
    }
    for (let i = 0; i < a.min; i++) cur = iteration(cur, false);
    return cur;
  };
  const match = node(OP_MATCH, -1);
  const start = emit(ast, match);
  return {
    op: Uint8Array.from(op),
    out: Int32Array.from(out),
    arg: Int32Array.from(arg),
    start,
    ...classify(sets),
  };
}

type Classes = Pick<Nfa, "classes" | "asciiClass" | "wideStarts" | "wideClass" | "hit">;

/** Splits the code-unit space at every range boundary, then merges regions no set tells apart. */
function classify(sets: readonly Ranges[]): Classes {
  const cuts = new Set<number>([0, 128]);
  for (const r of sets)
    for (let i = 0; i < r.length; i += 2) cuts.add(r[i] as number).add((r[i + 1] as number) + 1);
  const starts = [...cuts].filter((c) => c <= 0xffff).sort((a, b) => a - b);
  const bySignature = new Map<string, number>();
  const classOf = (rep: number): number => {
    const sig = sets.map((r) => (contains(r, rep) ? "1" : "0")).join("");
    let k = bySignature.get(sig);
    if (k === undefined) {
      k = bySignature.size;
      bySignature.set(sig, k);
    }
    return k;
  };
  const asciiClass = new Uint16Array(128);
  const wideStarts: number[] = [];
  const wideClass: number[] = [];
  for (let i = 0; i < starts.length; i++) {
    const lo = starts[i] as number;
    const k = classOf(lo);
    if (lo >= 128) {
      wideStarts.push(lo);
      wideClass.push(k);
    } else asciiClass.fill(k, lo, Math.min(128, starts[i + 1] ?? 128));
  }
  const classes = bySignature.size;
  const hit = new Uint8Array(sets.length * classes);
  const sigs = [...bySignature.keys()];
  sigs.forEach((sig, k) => {
    for (let s = 0; s < sets.length; s++) hit[s * classes + k] = sig[s] === "1" ? 1 : 0;
  });
  return {
    classes,
    asciiClass,
    wideStarts: Int32Array.from(wideStarts),
    wideClass: Uint16Array.from(wideClass),
    hit,
  };
}

/** Class of code unit `c`. */
export function classOf(nfa: Nfa, c: number): number {
  if (c < 128) return nfa.asciiClass[c] as number;
  const starts = nfa.wideStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= c) lo = mid;
    else hi = mid - 1;
  }
  return nfa.wideClass[lo] as number;
}
