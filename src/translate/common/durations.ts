/**
 * A Gateway API Duration (GEP-2257): one to four `<number><unit>` parts, units h, m, s, ms, numbers of at
 * most 5 digits, e.g. `1h30m`, `500ms`, `0s`. Returns milliseconds, or undefined when malformed (Go's
 * `time.ParseDuration` accepts more, e.g. `1.5s`; the CRD pattern does not, and neither do we).
 */
export function parseDuration(text: string): number | undefined {
  if (typeof text !== "string" || !/^([0-9]{1,5}(h|m|s|ms)){1,4}$/.test(text)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let ms = 0;
  for (const m of text.matchAll(/([0-9]{1,5})(ms|h|m|s)/g))
    ms += Number(m[1]) * (unit[m[2] as string] as number);
  return ms;
}
