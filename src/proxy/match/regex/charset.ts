/**
 * Sets of UTF-16 code units as sorted, disjoint, inclusive ranges `[lo0, hi0, lo1, hi1, …]`. The engine
 * works on code units (as `charCodeAt` returns them) because JavaScript's RegExp without the `u` flag does,
 * and we keep exactly the semantics the data plane had when it used RegExp.
 */
export type Ranges = readonly number[];

export const MAX_CODE = 0xffff;

/** Sorts and merges overlapping or adjacent ranges. */
export function normalise(ranges: readonly number[]): number[] {
  const pairs: [number, number][] = [];
  for (let i = 0; i + 1 < ranges.length; i += 2) pairs.push([ranges[i] as number, ranges[i + 1] as number]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of pairs) {
    const last = out.length - 1;
    if (last > 0 && lo <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, hi);
    else out.push(lo, hi);
  }
  return out;
}

/** Every code unit not in `ranges` (which must be normalised). */
export function negate(ranges: Ranges): number[] {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    const lo = ranges[i] as number;
    if (lo > next) out.push(next, lo - 1);
    next = (ranges[i + 1] as number) + 1;
  }
  if (next <= MAX_CODE) out.push(next, MAX_CODE);
  return out;
}

export function contains(ranges: Ranges, c: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (c < (ranges[i] as number)) return false;
    if (c <= (ranges[i + 1] as number)) return true;
  }
  return false;
}

const digit: Ranges = [0x30, 0x39];
const word: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
/** ECMAScript WhiteSpace and LineTerminator, what `\s` matches. */
const space: Ranges = normalise([
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f,
  0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
]);
/** What `.` matches without the `s` flag: everything but the four line terminators. */
export const DOT: Ranges = negate(normalise([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]));

/** The set of a class escape letter (`d w s D W S`), or undefined for any other letter. */
export function classEscape(letter: string): Ranges | undefined {
  switch (letter) {
    case "d":
      return digit;
    case "w":
      return word;
    case "s":
      return space;
    case "D":
      return negate(digit);
    case "W":
      return negate(word);
    case "S":
      return negate(space);
    default:
      return undefined;
  }
}
