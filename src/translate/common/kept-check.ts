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

/**
 * `compute` kept per key object, dropped with it: an unchanged Ingress is the same object between
 * translates, so what depends on it alone is computed once. Later arguments are not part of the key.
 */
export function keptPerObject<K extends object, A extends unknown[], V>(
  compute: (key: K, ...rest: A) => V,
): (key: K, ...rest: A) => V {
  const kept = new WeakMap<K, V>();
  return (key, ...rest) => {
    if (kept.has(key)) return kept.get(key) as V;
    const value = compute(key, ...rest);
    kept.set(key, value);
    return value;
  };
}
