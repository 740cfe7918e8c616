/**
 * Per-route counters across the processes of `--workers`: each process counts the requests it serves in
 * its own `RouteStatsTable`; the primary (the one with the admin port) reads its workers' counters over
 * their loopback admin ports (`/api/route-totals`, once per history slice) and adds them to its own, so
 * the dashboard shows the whole gateway as /metrics does. A worker that does not answer in time keeps
 * its last counters (dropping them would read as the gateway's counters going back, then a burst).
 */
import { latencyBuckets, type RouteStats, type RouteStatsTable } from "../route-stats.ts";

/** One process's cumulative counters by route, as JSON. */
export type RouteTotals = Record<string, { byClass: number[]; buckets: number[]; count: number }>;

/** This process's counters, for the primary to collect. */
export function routeTotalsOf(table: RouteStatsTable): RouteTotals {
  const out: RouteTotals = {};
  for (const [route, s] of table.entries())
    out[route] = { byClass: [...s.byClass], buckets: [...s.buckets], count: s.count };
  return out;
}

/** What the history reads: a route name and its cumulative counters. */
export interface RouteStatsReader {
  entries(): Iterable<[string, RouteStats]>;
}

/** The process's own table plus the last counters read from its workers. */
export class MergedRouteStats implements RouteStatsReader {
  /** Each worker's last answer, by its admin port. */
  private readonly peers = new Map<number, RouteTotals>();

  constructor(private readonly own: RouteStatsTable) {}

  /** Take the workers' new answers; a worker missing from `answers` keeps its previous counters. */
  update(answers: ReadonlyMap<number, RouteTotals>): void {
    for (const [port, totals] of answers) this.peers.set(port, totals);
  }

  *entries(): Iterable<[string, RouteStats]> {
    if (this.peers.size === 0) {
      yield* this.own.entries();
      return;
    }
    const merged = new Map<string, RouteStats>();
    const into = (route: string) => {
      let m = merged.get(route);
      if (m === undefined) {
        m = {
          byClass: new Float64Array(6),
          buckets: new Float64Array(latencyBuckets.length + 1),
          sum: 0,
          count: 0,
          bytes: 0,
        };
        merged.set(route, m);
      }
      return m;
    };
    const add = (m: RouteStats, byClass: ArrayLike<number>, buckets: ArrayLike<number>, count: number) => {
      for (let i = 0; i < m.byClass.length; i++) m.byClass[i] = (m.byClass[i] as number) + (byClass[i] ?? 0);
      for (let i = 0; i < m.buckets.length; i++) m.buckets[i] = (m.buckets[i] as number) + (buckets[i] ?? 0);
      m.count += count;
    };
    for (const [route, s] of this.own.entries()) add(into(route), s.byClass, s.buckets, s.count);
    for (const peer of this.peers.values())
      for (const [route, s] of Object.entries(peer)) add(into(route), s.byClass, s.buckets, s.count);
    yield* merged.entries();
  }
}

/** Each worker's counters by admin port; one that does not answer within a second is left out. */
export async function fetchRouteTotals(adminPorts: Iterable<number>): Promise<Map<number, RouteTotals>> {
  const out = new Map<number, RouteTotals>();
  await Promise.all(
    [...adminPorts].map(async (port) => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/route-totals`, {
          signal: AbortSignal.timeout(1000),
        });
        if (res.ok) out.set(port, (await res.json()) as RouteTotals);
      } catch {
        // left out of this slice; its previous counters stay
      }
    }),
  );
  return out;
}
