/** Small statistics for bench reports. */

/** Median of a non-empty list (mean of the two middle values for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Two-sided sign test: the chance of a split at least this uneven if neither side were cheaper. */
export function signTest(lower: number, n: number): number {
  const k = Math.min(lower, n - lower);
  let tail = 0;
  let c = 1;
  for (let i = 0; i <= k; i++) {
    tail += c;
    c = (c * (n - i)) / (i + 1);
  }
  return Math.min(1, (2 * tail) / 2 ** n);
}

/** `min–max` of a list, rounded to `digits`. */
export function spread(xs: readonly number[], digits = 0): string {
  if (xs.length === 0) return "–";
  return `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
}
