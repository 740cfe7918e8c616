/**
 * Matcher micro-benchmark: the route lookup the request path does (normaliseHost → findVirtualHost →
 * findRoute), over a model built by the real translator from a realistic route set (bench/workload.ts)
 * and compiled by the real compiler, at several sizes. Requests are shuffled so successive lookups touch
 * different hosts, as traffic does; every lookup's answer is checked once before timing.
 */
import { compile } from "../src/proxy/compile.ts";
import { groupListeners } from "../src/proxy/listeners/listener-merge.ts";
import { findVirtualHost, normaliseHost } from "../src/proxy/match/host.ts";
import { findRoute } from "../src/proxy/match/routes.ts";
import type { CompiledRoute, ListenerTable } from "../src/proxy/table.ts";
import { translate } from "../src/translate/translate.ts";
import { median } from "./stats.ts";
import { shuffled, snapshotOf, workload } from "./workload.ts";

export interface MatcherResult {
  readonly routes: number;
  readonly hosts: number;
  readonly buildMs: number;
  readonly nsPerLookup: number;
  /** Slowest and fastest round. */
  readonly spread: readonly [number, number];
  /** Only the lookups on the one big host (a tenth of the routes share it). */
  readonly bigHostNs: number;
  /** Requests drawn with Zipf (s = 1) popularity, as real traffic concentrates on few routes. */
  readonly zipfNs: number;
}

interface Probe {
  readonly host: string;
  readonly path: string;
  readonly headers: Headers;
  readonly hit: boolean;
}

export function buildTable(routes: number): { table: ListenerTable; probes: Probe[]; buildMs: number } {
  const w = workload(routes);
  const started = performance.now();
  const { model } = translate(snapshotOf(w.objects), { httpPort: 8080, nowMs: 0 });
  const compiled = compile(model);
  // Ingress and Gateway listeners share the port: one socket, one merged host index, as served.
  const groups = groupListeners(
    compiled.listeners.filter((l) => l.protocol === "HTTP"),
    "127.0.0.1",
    () => {},
  );
  const buildMs = performance.now() - started;
  if (groups.size !== 1) throw new Error(`matcher: expected one HTTP socket, got ${groups.size}`);
  const table = [...groups.values()][0] as ListenerTable;
  const probes = shuffled(
    w.requests.map((r, i) => ({
      host: r.host,
      path: r.path,
      headers: new Headers(r.headers),
      hit: i < w.routes,
    })),
  );
  return { table, probes, buildMs };
}

function lookup(table: ListenerTable, p: Probe): CompiledRoute | undefined {
  const vh = findVirtualHost(table.hosts, normaliseHost(p.host));
  return vh === undefined ? undefined : findRoute(vh, p.path, "GET", p.headers, "");
}

/** Every hit finds a route and every miss none: a lookup that is fast because it is wrong counts for nothing. */
function check(table: ListenerTable, probes: readonly Probe[]): void {
  for (const p of probes) {
    const r = lookup(table, p);
    if ((r !== undefined) !== p.hit)
      throw new Error(`matcher: ${p.host}${p.path} ${p.hit ? "found no route" : `matched ${r?.name}`}`);
  }
}

/** ns per lookup over `count` lookups cycling through `probes`. */
function timeLookups(table: ListenerTable, probes: readonly Probe[], count: number): number {
  let sink = 0;
  const n = probes.length;
  const start = Bun.nanoseconds();
  for (let i = 0, k = 0; i < count; i++, k = k + 1 === n ? 0 : k + 1) {
    const r = lookup(table, probes[k] as Probe);
    if (r !== undefined) sink += r.index;
  }
  const ns = (Bun.nanoseconds() - start) / count;
  if (sink < 0) console.log(sink); // keeps the loop's result alive
  return ns;
}

/** Lookups enough to fill `ms` at the speed of one pass over `probes` (which is also the warm-up). */
function calibrate(table: ListenerTable, probes: readonly Probe[], ms: number): number {
  let ns = timeLookups(table, probes, probes.length);
  if (probes.length < 100_000) ns = timeLookups(table, probes, 100_000);
  return Math.max(probes.length, Math.round((ms * 1e6) / ns));
}

export function runMatcher(
  sizes: readonly number[],
  opts: { roundMs: number; rounds: number },
): MatcherResult[] {
  const out: MatcherResult[] = [];
  for (const size of sizes) {
    const { table, probes, buildMs } = buildTable(size);
    check(table, probes);
    const count = calibrate(table, probes, opts.roundMs); // also the warm-up: JIT tiers and caches
    const rounds = Array.from({ length: opts.rounds }, () => timeLookups(table, probes, count));
    const big = probes.filter((p) => p.host === "api.example.com");
    const bigHostNs =
      big.length > 0 ? timeLookups(table, big, calibrate(table, big, opts.roundMs)) : Number.NaN;
    const zipf = zipfSample(probes, 200_000);
    const zipfNs = timeLookups(table, zipf, calibrate(table, zipf, opts.roundMs));
    out.push({
      zipfNs,
      routes: probes.filter((p) => p.hit).length,
      hosts: table.hosts.exact.size + table.hosts.oneLabel.size + table.hosts.anyLabels.size,
      buildMs,
      nsPerLookup: median(rounds),
      spread: [Math.min(...rounds), Math.max(...rounds)],
      bigHostNs,
    });
  }
  return out;
}

/** `count` probes drawn with probability ∝ 1/rank (rank = position in the shuffled list), seeded. */
function zipfSample(probes: readonly Probe[], count: number): Probe[] {
  const cdf: number[] = [];
  let sum = 0;
  for (let i = 0; i < probes.length; i++) {
    sum += 1 / (i + 1);
    cdf.push(sum);
  }
  let s = 7;
  const out: Probe[] = [];
  for (let k = 0; k < count; k++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const x = ((s >>> 4) / 2 ** 27) * sum;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    out.push(probes[lo] as Probe);
  }
  return out;
}

export function formatMatcher(results: readonly MatcherResult[]): string {
  const lines = [
    "routes    hosts   ns/lookup (median)   spread          Zipf ns   big host ns   translate+compile ms",
  ];
  for (const r of results)
    lines.push(
      `${String(r.routes).padEnd(9)} ${String(r.hosts).padStart(6)}   ${r.nsPerLookup.toFixed(0).padStart(18)}   ${`${r.spread[0].toFixed(0)}–${r.spread[1].toFixed(0)}`.padEnd(14)}  ${r.zipfNs.toFixed(0).padStart(7)}   ${r.bigHostNs.toFixed(0).padStart(11)}   ${r.buildMs.toFixed(0).padStart(20)}`,
    );
  return lines.join("\n");
}

export function matcherSection(ctx: { settings: { smoke: boolean; rounds: number } }): string {
  const smoke = ctx.settings.smoke;
  const results = runMatcher(smoke ? [10, 1000] : [10, 1000, 10_000, 100_000], {
    roundMs: smoke ? 20 : 300,
    rounds: smoke ? 1 : Math.max(5, ctx.settings.rounds),
  });
  const at10k = results.find((r) => r.routes === 10_000);
  return [
    "normaliseHost + findVirtualHost + findRoute, shuffled requests (one per route + ~10% misses), warmed up; median of rounds",
    formatMatcher(results),
    ...(at10k ? [`goal: < 1000 ns at 10k routes → ${at10k.nsPerLookup.toFixed(0)} ns`] : []),
    "bytes allocated per lookup: not measurable in Bun 1.4 (heapStats()/heapSize() only move at a collection); by reading the code: none on exact hosts, one substring per path segment walked on indexed hosts, one per wildcard suffix tried",
  ].join("\n");
}
