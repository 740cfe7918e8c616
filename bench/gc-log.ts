/**
 * JavaScriptCore's collection log (`BUN_JSC_logGC=1` on stderr), read for bench/ab.ts --alloc: each
 * collection's kind and pause, from lines like `START M 53976kb => EdenCollection, … => 26111kb,
 * p=1.79ms …`. The sizes there are the heap's capacity (blocks held, plus extra memory), not live or
 * allocated bytes: an idle process's timer-driven collections show the same 8.6 MB of "growth" each with
 * nothing allocated, so no byte count is derived from them.
 */

export interface Collection {
  /** Heap capacity (kB) when the collection started. */
  readonly startKb: number;
  /** Heap capacity (kB) when it ended. */
  readonly endKb: number;
  /** Pause (ms). */
  readonly pauseMs: number;
  readonly kind: string;
}

const LINE = /START \w+ (\d+)kb => (\w+)Collection\b.*? => (\d+)kb, p=([\d.]+)ms/g;

/** Every collection in `log`, in order (lines JSC split or garbled are skipped). */
export function collections(log: string): Collection[] {
  const out: Collection[] = [];
  for (const m of log.matchAll(LINE))
    out.push({ startKb: Number(m[1]), kind: m[2] as string, endKb: Number(m[3]), pauseMs: Number(m[4]) });
  return out;
}
