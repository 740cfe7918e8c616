/**
 * Bytes a process allocated on the JavaScript heap, read from JavaScriptCore's collection log
 * (`BUN_JSC_logGC=1` on stderr). Each collection logs the heap size when it starts and when it ends:
 * `START M 53976kb => EdenCollection, … => 26111kb, p=1.79ms …`. What was allocated between two
 * collections is the next one's start size less the previous one's end size, so summing that over a
 * window gives the bytes allocated in it, exactly to the collection: unlike CPU time, the figure does not
 * move with the machine's neighbours, so a change of a few hundred bytes a request shows in one run.
 */

export interface Collection {
  /** Heap size (kB) when the collection started. */
  readonly startKb: number;
  /** Heap size (kB) when it ended. */
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

/**
 * kB allocated between the end of collection `from - 1` and the start of the last one; 0 when fewer than
 * two collections bound the window. Allocation after the last collection is not counted (not yet known).
 */
export function allocatedKb(all: readonly Collection[], from: number): number {
  let kb = 0;
  for (let i = Math.max(1, from); i < all.length; i++)
    kb += (all[i] as Collection).startKb - (all[i - 1] as Collection).endKb;
  return kb;
}
