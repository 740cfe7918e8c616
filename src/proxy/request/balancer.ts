/**
 * Backend choice by weight: smooth weighted round-robin (as nginx does), so a 1:3 split is exact over
 * every 4 requests and tests can rely on it. Weight 0 is never picked.
 */

/** A picker over `items`; returns undefined on every call when no item has a positive weight. */
export function weightedPicker<T>(
  items: readonly { readonly weight: number; readonly value: T }[],
): () => T | undefined {
  const live = items.filter((i) => i.weight > 0 && Number.isFinite(i.weight));
  if (live.length === 0) return pickNothing;
  if (live.length === 1) return always((live[0] as { value: T }).value);
  return smoothWeighted(live);
}

// Each case in its own function: a closure keeps only its own function's scope alive, and a table
// holds one picker per route (most of them over one backend).
const pickNothing = (): undefined => undefined;

function always<T>(only: T): () => T {
  return () => only;
}

function smoothWeighted<T>(
  live: readonly { readonly weight: number; readonly value: T }[],
): () => T | undefined {
  const weights = live.map((i) => i.weight);
  const values = live.map((i) => i.value);
  const current = live.map(() => 0);
  const total = weights.reduce((a, b) => a + b, 0);
  return () => {
    let best = 0;
    for (let i = 0; i < current.length; i++) {
      const c = (current[i] as number) + (weights[i] as number);
      current[i] = c;
      if (c > (current[best] as number)) best = i;
    }
    current[best] = (current[best] as number) - total;
    return values[best];
  };
}
