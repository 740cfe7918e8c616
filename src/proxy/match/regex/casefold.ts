/**
 * Case folding for the `ignoreCase` flag, as JavaScript's RegExp does it without the `u` flag: two code
 * units match when they canonicalise to the same one, and Canonicalize(c) is `c.toUpperCase()` when that
 * is a single code unit, except that a non-ASCII unit never canonicalises into ASCII (so `ſ` is not `s`,
 * and the Kelvin sign is not `k`). A class matches a code unit when some member canonicalises like it,
 * so a set is widened to every unit sharing a canonical form with one of its members; negation comes
 * after widening (`[^a]` with the flag matches neither `a` nor `A`), which the parser arranges.
 */
import { normalise, type Ranges } from "./charset.ts";

/**
 * The code units of every canonical class with more than one member, class after class; where each class
 * starts (with a final end offset); and each code unit's class, -1 for a unit alone in its class. Built on
 * first use: about 1,100 classes, 2,300 units.
 */
interface Tables {
  readonly members: Uint16Array;
  readonly starts: Int32Array;
  readonly classOf: Int16Array;
}
let built: Tables | undefined;

function tables(): Tables {
  if (built !== undefined) return built;
  const canon = new Uint16Array(0x10000);
  for (let c = 0; c <= 0xffff; c++) {
    const upper = String.fromCharCode(c).toUpperCase();
    const u = upper.length === 1 ? upper.charCodeAt(0) : c;
    canon[c] = c >= 128 && u < 128 ? c : u;
  }
  // Keyed by canonical form: the units that change when canonicalised, then the form itself if it is
  // its own canonical form.
  const byCanon = new Map<number, number[]>();
  for (let c = 0; c <= 0xffff; c++) {
    const k = canon[c] as number;
    if (k === c) continue;
    const list = byCanon.get(k);
    if (list === undefined) byCanon.set(k, [c]);
    else list.push(c);
  }
  const flat: number[] = [];
  const offsets: number[] = [];
  const classOf = new Int16Array(0x10000).fill(-1);
  for (const [k, list] of byCanon) {
    if (canon[k] === k) list.push(k);
    if (list.length < 2) continue;
    for (const c of list) classOf[c] = offsets.length;
    offsets.push(flat.length);
    flat.push(...list);
  }
  offsets.push(flat.length);
  built = { members: Uint16Array.from(flat), starts: Int32Array.from(offsets), classOf };
  return built;
}

/** Whether normalised `ranges` holds `c` (binary search: widening a large set probes every cased unit). */
function holds(ranges: Ranges, c: number): boolean {
  let lo = 0;
  let hi = (ranges.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < (ranges[2 * mid] as number)) hi = mid - 1;
    else if (c > (ranges[2 * mid + 1] as number)) lo = mid + 1;
    else return true;
  }
  return false;
}

/** `ranges` (normalised) widened to every code unit that canonicalises like one of its members. */
export function foldCase(ranges: Ranges): number[] {
  const { members, starts, classOf } = tables();
  const classes = new Set<number>();
  let size = 0;
  for (let i = 0; i < ranges.length; i += 2) size += (ranges[i + 1] as number) - (ranges[i] as number) + 1;
  // A small set (a literal, a short range) is cheaper to walk; a large one (negated, \W) to probe.
  if (size <= members.length) {
    for (let i = 0; i < ranges.length; i += 2)
      for (let c = ranges[i] as number; c <= (ranges[i + 1] as number); c++) {
        const k = classOf[c] as number;
        if (k >= 0) classes.add(k);
      }
  } else {
    for (let i = 0; i < members.length; i++) {
      const c = members[i] as number;
      if (holds(ranges, c)) classes.add(classOf[c] as number);
    }
  }
  if (classes.size === 0) return [...ranges];
  const added = [...ranges];
  for (const k of classes)
    for (let i = starts[k] as number; i < (starts[k + 1] as number); i++)
      added.push(members[i] as number, members[i] as number);
  return normalise(added);
}
