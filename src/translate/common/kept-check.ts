/**
 * The self-check of kept translations (gateway/httproute/memo.ts, ingress/memo.ts). With
 * GATEHOUSE_TRANSLATE_CHECK=1 (set for the test suite by test/setup.ts, and for conformance) every
 * reuse of a kept result is compared with a fresh translation, and a difference throws: it would mean
 * the result depends on something the memo does not watch, or that something downstream changed it.
 */
export const checkingKept = process.env.GATEHOUSE_TRANSLATE_CHECK === "1";

export function checkKept(what: string, kept: unknown, fresh: unknown): void {
  if (Bun.deepEquals(fresh, kept, true)) return;
  const message = `kept translation of ${what} differs from a fresh one`;
  // Loud: the caller turns a throw into one object's internal problem, which a test might not look at.
  console.error(message);
  throw new Error(message);
}
