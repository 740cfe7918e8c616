/**
 * Capture groups in O(program × input), never backtracking: a Pike VM runs every thread of the capture
 * program (nfa.ts) in lockstep over the input, one list of threads per position, each thread carrying
 * its own capture slots. Within a position, threads are explored depth first in priority order (split
 * `out` before `arg`), and a thread reaching a state an earlier one already holds is dropped: both have
 * the same future, and the earlier one is what a backtracking engine would have tried first. So the
 * first thread to match at the end is the match JavaScript's backtracking `exec` would report.
 *
 * A state is a node plus one flag, "consumed since the last BEGIN" (ECMAScript's rule that an optional
 * iteration must consume): an END dies without it. The flag is all that is needed even for nested
 * repetitions: the only way out of an inner iteration is its END, which requires the flag, so after
 * it the flag also holds for every enclosing iteration. Nodes × 2 states bound each position's work.
 *
 * The depth-first walk keeps one working copy of the slots and an undo entry on its stack for every
 * write, as a backtracking engine would; a thread's slots are copied only when it is put on the next
 * list, and only if its path wrote any, so most threads share their parent's array.
 */
import {
  classOf,
  type Nfa,
  OP_BEGIN,
  OP_BOL,
  OP_CHAR,
  OP_END,
  OP_EOL,
  OP_JUMP,
  OP_MATCH,
  OP_RESET,
  OP_SAVE,
  OP_SPLIT,
} from "./nfa.ts";

export class PikeVm {
  /** `mark[node * 2 + flag] === gen`: state already reached at the current position. */
  private readonly mark: Uint32Array;
  /** `listed[node] === gen`: a CHAR or MATCH node is already on the list being built. */
  private readonly listed: Uint32Array;
  private gen = 0;
  /**
   * Depth-first stack: states still to explore (node, flag), and undo entries (-1 - slot, old value)
   * that restore the working slots when the walk backs out of a write.
   */
  private readonly stackNode: Int32Array;
  private readonly stackValue: Int32Array;
  /** The slots of the path being explored. */
  private readonly work: Int32Array;
  private readonly empty: Int32Array;
  // The lists of the current and the next position: CHAR or MATCH nodes by priority, with their slots.
  private curNodes: Int32Array;
  private curSlots: Int32Array[];
  private nextNodes: Int32Array;
  private nextSlots: Int32Array[];

  constructor(
    private readonly nfa: Nfa,
    slotCount: number,
  ) {
    const n = nfa.op.length;
    this.mark = new Uint32Array(2 * n);
    this.listed = new Uint32Array(n);
    // Each of the 2 × n states is expanded once per position and leaves at most one entry behind (a
    // split's second successor), plus one undo entry per slot it writes.
    let depth = 1;
    for (let node = 0; node < n; node++) {
      const a = nfa.arg[node] as number;
      const writes =
        nfa.op[node] === OP_SAVE ? 1 : nfa.op[node] === OP_RESET ? 2 * ((a & 0xffff) - (a >> 16) + 1) : 0;
      depth += 2 * (1 + writes);
    }
    this.stackNode = new Int32Array(depth);
    this.stackValue = new Int32Array(depth);
    this.work = new Int32Array(slotCount);
    this.empty = new Int32Array(slotCount).fill(-1);
    this.curNodes = new Int32Array(n);
    this.nextNodes = new Int32Array(n);
    this.curSlots = new Array<Int32Array>(n);
    this.nextSlots = new Array<Int32Array>(n);
  }

  /**
   * Slot values of the highest-priority match of the whole of `s` (start and end of each group, -1 for
   * a group that did not take part), or null when `s` does not match.
   */
  run(s: string): Int32Array | null {
    const { op, out, arg, hit, classes } = this.nfa;
    const n = s.length;
    let { curNodes, curSlots, nextNodes, nextSlots } = this;
    this.nextGeneration();
    let count = this.follow(this.nfa.start, this.empty, 0, n, curNodes, curSlots, 0);
    for (let i = 0; i < n && count > 0; i++) {
      this.nextGeneration();
      const cls = classOf(this.nfa, s.charCodeAt(i));
      let next = 0;
      for (let t = 0; t < count; t++) {
        const node = curNodes[t] as number;
        if (op[node] === OP_CHAR && hit[(arg[node] as number) * classes + cls] === 1) {
          const slots = curSlots[t] as Int32Array;
          next = this.follow(out[node] as number, slots, i + 1, n, nextNodes, nextSlots, next);
        }
      }
      const nodes = curNodes;
      curNodes = nextNodes;
      nextNodes = nodes;
      const lists = curSlots;
      curSlots = nextSlots;
      nextSlots = lists;
      count = next;
    }
    // At the end of the input the list holds CHAR nodes (useless now) and MATCH nodes, by priority.
    let found: Int32Array | null = null;
    for (let t = 0; t < count && found === null; t++)
      if (op[curNodes[t] as number] === OP_MATCH) found = curSlots[t] as Int32Array;
    return found;
  }

  private nextGeneration(): void {
    if (++this.gen === 0xffffffff) {
      this.mark.fill(0);
      this.listed.fill(0);
      this.gen = 1;
    }
  }

  /**
   * Explores the states reachable without consuming from `root` at position `pos`, depth first in
   * priority order, appending the CHAR nodes (and at the end of input, MATCH) met to the list from index
   * `count`, each with its slots; returns the new count. A thread that has just consumed starts with
   * the flag set (and the flag is never read before a BEGIN, so the first position's value is moot).
   */
  private follow(
    root: number,
    slots: Int32Array,
    pos: number,
    end: number,
    nodes: Int32Array,
    lists: Int32Array[],
    count: number,
  ): number {
    const { op, out, arg } = this.nfa;
    const { mark, listed, stackNode, stackValue, work, gen } = this;
    // A loop, not `work.set`: slots are few, and the native call costs more than copying them.
    for (let i = 0; i < work.length; i++) work[i] = slots[i] as number;
    /** Writes on the current path not yet undone: none means the thread still has `slots`. */
    let dirty = 0;
    let sp = 0;
    // The state being explored; a successor is explored next without a trip through the stack.
    let node = root;
    let flag = 1;
    for (;;) {
      if (node < 0) {
        if (sp === 0) break;
        sp--;
        node = stackNode[sp] as number;
        if (node < 0) {
          work[-1 - node] = stackValue[sp] as number;
          dirty--;
          continue;
        }
        flag = stackValue[sp] as number;
      }
      // Marked when taken, not when pushed: the preferred branch must reach shared states first.
      const state = node * 2 + flag;
      if (mark[state] === gen) {
        node = -1;
        continue;
      }
      mark[state] = gen;
      const o = op[node];
      if (o === OP_CHAR || o === OP_MATCH) {
        if ((o === OP_CHAR || pos === end) && listed[node] !== gen) {
          listed[node] = gen;
          nodes[count] = node;
          lists[count] = dirty === 0 ? slots : work.slice();
          count++;
        }
        node = -1;
      } else if (o === OP_SPLIT) {
        stackNode[sp] = arg[node] as number;
        stackValue[sp] = flag;
        sp++;
        node = out[node] as number;
      } else if (o === OP_SAVE || o === OP_RESET) {
        // Slots [from, to) take `value`; each write leaves an undo entry under the successor.
        const a = arg[node] as number;
        const from = o === OP_SAVE ? a : 2 * (a >> 16) - 2;
        const to = o === OP_SAVE ? a + 1 : 2 * (a & 0xffff);
        const value = o === OP_SAVE ? pos : -1;
        for (let slot = from; slot < to; slot++) {
          stackNode[sp] = -1 - slot;
          stackValue[sp] = work[slot] as number;
          sp++;
          work[slot] = value;
          dirty++;
        }
        node = out[node] as number;
      } else if (o === OP_BEGIN) {
        flag = 0;
        node = out[node] as number;
      } else if (
        o === OP_JUMP ||
        (o === OP_BOL && pos === 0) ||
        (o === OP_EOL && pos === end) ||
        (o === OP_END && flag === 1)
      )
        node = out[node] as number;
      else node = -1;
    }
    return count;
  }
}
