/**
 * Thompson NFA over character classes. Nodes live in typed arrays so the matcher's inner loops touch
 * no objects. Code units are first mapped to equivalence classes (code units no set of the pattern tells
 * apart share a class), so a DFA state needs one transition slot per class instead of per code unit.
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

/** Nodes `ast` compiles to (with the final MATCH), computed before building so huge repeats are refused cheaply. */
export function nodeCount(ast: Ast): number {
  const size = (a: Ast): number => {
    switch (a.kind) {
      case "set":
      case "bol":
      case "eol":
        return 1;
      case "cat":
        return a.items.reduce((n, x) => n + size(x), 0);
      case "alt":
        return a.items.reduce((n, x) => n + size(x), 0) + a.items.length - 1;
      case "rep": {
        const copies = a.max === -1 ? a.min + 1 : a.max;
        const optional = a.max === -1 ? 1 : a.max - a.min;
        return Math.min(size(a.sub) * copies + optional, Number.MAX_SAFE_INTEGER);
      }
    }
  };
  return size(ast) + 1;
}

export function buildNfa(ast: Ast): Nfa {
  const total = nodeCount(ast);
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
      case "cat":
        return a.items.reduceRight((n, x) => emit(x, n), next);
      case "alt": {
        let start = emit(a.items[a.items.length - 1] as Ast, next);
        for (let i = a.items.length - 2; i >= 0; i--)
          start = node(OP_SPLIT, emit(a.items[i] as Ast, next), start);
        return start;
      }
      case "rep":
        return emitRepeat(a.sub, a.min, a.max, next);
    }
  };
  const emitRepeat = (sub: Ast, min: number, max: number, next: number): number => {
    let cur = next;
    if (max === -1) {
      const loop = node(OP_SPLIT, -1, next);
      out[loop] = emit(sub, loop);
      cur = loop;
    } else {
      // x{0,k} as (x(x(…)?)?)?: each optional copy either continues to a deeper copy or leaves.
      for (let i = min; i < max; i++) cur = node(OP_SPLIT, emit(sub, cur), next);
    }
    for (let i = 0; i < min; i++) cur = emit(sub, cur);
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
