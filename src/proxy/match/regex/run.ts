/**
 * Runs an NFA over a whole string (anchored both ends) in O(nodes × length), never backtracking.
 * A DFA is built lazily: each state is a set of NFA nodes, each transition is filled the first time a
 * class is seen from that state, so steady-state matching is one typed-array read per code unit. The
 * cache is bounded per pattern (a crafted input cannot grow memory without limit); once full, the rest
 * of an input is run by plain NFA simulation, which is slower but still linear.
 */
import { classOf, type Nfa, OP_BOL, OP_CHAR, OP_EOL, OP_JUMP, OP_MATCH, OP_SPLIT } from "./nfa.ts";

/**
 * Cached DFA states per pattern, and total transition slots and NFA-node entries across them: about
 * 100 KB per pattern at most, so even an attacker steering every regex route to its cap costs bounded
 * memory. Ordinary patterns need a handful of states.
 */
const MAX_STATES = 256;
const MAX_SLOTS = 8192;
const MAX_ENTRIES = 8192;

const UNKNOWN = 0;
/** Transition slot meaning "not cacheable": step by simulation from here. */
const FULL = -1;

export class LazyDfa {
  /** NFA nodes (CHAR, parked EOL, MATCH) of each DFA state. */
  private readonly lists: Int32Array[] = [];
  /** 1 accepts at the end of input, 0 not, -1 not yet computed. */
  private accepts = new Int8Array(16);
  private readonly ids = new Map<string, number>();
  /** `trans[state * classes + class]`: next state + 1, UNKNOWN or FULL. */
  private trans: Int32Array;
  private entries = 0;
  private readonly start: number;
  private readonly emptyMatches: boolean;
  // Scratch for closures: a node is on the list being built iff mark[node] === gen.
  private readonly mark: Uint32Array;
  private gen = 0;
  private readonly stack: Int32Array;
  private readonly scratch: Int32Array;

  constructor(private readonly nfa: Nfa) {
    const n = nfa.op.length;
    this.mark = new Uint32Array(n);
    this.stack = new Int32Array(n);
    this.scratch = new Int32Array(n);
    this.trans = new Int32Array(16 * nfa.classes);
    this.intern(new Int32Array(0)); // state 0: the dead state, no way left to match
    this.start = this.intern(this.closure([nfa.start], true, false)) as number;
    this.emptyMatches = this.closure([nfa.start], true, true).includes(this.matchNode());
  }

  test(s: string): boolean {
    const n = s.length;
    if (n === 0) return this.emptyMatches;
    const nfa = this.nfa;
    const ascii = nfa.asciiClass;
    const k = nfa.classes;
    let trans = this.trans;
    // Slots hold the next state's row offset + 1, so the loop needs no multiply; row 0 is the dead state.
    let row = this.start * k;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      const cls = c < 128 ? (ascii[c] as number) : classOf(nfa, c);
      let next = trans[row + cls] as number;
      if (next === UNKNOWN) {
        next = this.fill(row / k, cls);
        if (next === FULL)
          return this.simulate(this.stepList(this.lists[row / k] as Int32Array, cls), s, i + 1);
        trans = this.trans; // fill may have grown the table
      }
      row = next - 1;
      if (row === 0) return false;
    }
    return this.acceptsAt(row / k);
  }

  /** Computes and caches the transition from `d` on `cls`; FULL when the cache has no room. */
  private fill(d: number, cls: number): number {
    const id = this.intern(this.stepList(this.lists[d] as Int32Array, cls));
    // FULL is not stored: a later input may find the target state already cached by then.
    if (id === undefined) return FULL;
    const value = id * this.nfa.classes + 1;
    this.trans[d * this.nfa.classes + cls] = value;
    return value;
  }

  /** The DFA state of NFA node list `list`, adding it if the budget allows; undefined when it does not. */
  private intern(list: Int32Array): number | undefined {
    const key = list.join(",");
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.lists.length;
    const k = this.nfa.classes;
    if (id >= MAX_STATES || (id + 1) * k > MAX_SLOTS || this.entries + list.length > MAX_ENTRIES)
      return undefined;
    if ((id + 1) * k > this.trans.length) {
      const grown = new Int32Array(Math.min(this.trans.length * 2, MAX_SLOTS));
      grown.set(this.trans);
      this.trans = grown;
    }
    if (id >= this.accepts.length) {
      const grown = new Int8Array(this.accepts.length * 2).fill(-1);
      grown.set(this.accepts);
      this.accepts = grown;
    }
    this.accepts[id] = -1;
    this.lists.push(list);
    this.ids.set(key, id);
    this.entries += list.length;
    return id;
  }

  private acceptsAt(d: number): boolean {
    let a = this.accepts[d] as number;
    if (a === -1) {
      a = this.listAccepts(this.lists[d] as Int32Array) ? 1 : 0;
      this.accepts[d] = a;
    }
    return a === 1;
  }

  /** At the end of input (never offset 0 here: empty input is answered up front), `$` nodes pass. */
  private listAccepts(list: Int32Array): boolean {
    const { op, out } = this.nfa;
    const parked: number[] = [];
    for (const node of list) {
      if (op[node] === OP_MATCH) return true;
      if (op[node] === OP_EOL) parked.push(out[node] as number);
    }
    return parked.length > 0 && this.closure(parked, false, true).includes(this.matchNode());
  }

  /** NFA nodes after consuming a code unit of class `cls` from `list`, closed over empty moves. */
  private stepList(list: Int32Array, cls: number): Int32Array {
    const { op, out, arg, hit, classes } = this.nfa;
    const targets: number[] = [];
    for (const node of list)
      if (op[node] === OP_CHAR && hit[(arg[node] as number) * classes + cls] === 1)
        targets.push(out[node] as number);
    return this.closure(targets, false, false);
  }

  /**
   * Runs the rest of `s` from `from` without the cache, from NFA node list `list`. Two buffers are swapped
   * step to step and nothing is sorted or allocated: this is the path a hostile input is meant to reach.
   */
  private simulate(list: Int32Array, s: string, from: number): boolean {
    const { op, out, arg, hit, classes } = this.nfa;
    // A list holds each node at most once, so node-count buffers always suffice.
    let cur = new Int32Array(op.length);
    let next = new Int32Array(op.length);
    cur.set(list);
    let size = list.length;
    for (let i = from; i < s.length; i++) {
      if (size === 0) return false;
      const cls = classOf(this.nfa, s.charCodeAt(i));
      let roots = 0; // successors overwrite cur in place: never ahead of the entry being read
      for (let j = 0; j < size; j++) {
        const node = cur[j] as number;
        if (op[node] === OP_CHAR && hit[(arg[node] as number) * classes + cls] === 1)
          cur[roots++] = out[node] as number;
      }
      size = this.close(cur, roots, next, false, false);
      [cur, next] = [next, cur];
    }
    return this.listAccepts(cur.subarray(0, size));
  }

  /**
   * Every node reachable from `roots` by empty moves, keeping only those that consume input or decide at
   * the end (CHAR, MATCH, and `$` when not at the end). Sorted, so equal sets get equal keys.
   */
  private closure(roots: readonly number[], atStart: boolean, atEnd: boolean): Int32Array {
    const found = this.scratch;
    const count = this.close(Int32Array.from(roots), roots.length, found, atStart, atEnd);
    return found.slice(0, count).sort();
  }

  /** `closure` into `into` (unsorted), from the first `n` entries of `roots`; returns the count. */
  private close(roots: Int32Array, n: number, into: Int32Array, atStart: boolean, atEnd: boolean): number {
    const { op, out, arg } = this.nfa;
    const mark = this.mark;
    const stack = this.stack;
    if (++this.gen === 0xffffffff) {
      mark.fill(0);
      this.gen = 1;
    }
    const gen = this.gen;
    let sp = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      const r = roots[i] as number;
      if (mark[r] !== gen) {
        mark[r] = gen;
        stack[sp++] = r;
      }
    }
    while (sp > 0) {
      const node = stack[--sp] as number;
      const o = op[node];
      let a = -1;
      let b = -1;
      if (o === OP_SPLIT) {
        a = out[node] as number;
        b = arg[node] as number;
      } else if (o === OP_JUMP || (o === OP_BOL && atStart) || (o === OP_EOL && atEnd))
        a = out[node] as number;
      else if (o !== OP_BOL) into[count++] = node;
      if (a >= 0 && mark[a] !== gen) {
        mark[a] = gen;
        stack[sp++] = a;
      }
      if (b >= 0 && mark[b] !== gen) {
        mark[b] = gen;
        stack[sp++] = b;
      }
    }
    return count;
  }

  private matchNode(): number {
    return this.nfa.op.indexOf(OP_MATCH);
  }
}
