/**
 * The dashboard's server side: the recent-traffic history, the configuration version the page watches,
 * and the server-sent event stream. One timer per gateway feeds every open stream the same text (made
 * once per push, however many clients), and the number of streams is capped: one more is refused with
 * 503, so a flood of clients costs the gateway a fixed amount.
 */
import type { RouteStatsTable } from "../route-stats.ts";
import { RouteHistory, type RouteWindow } from "./route-history.ts";
import { MergedRouteStats, type RouteTotals, routeTotalsOf } from "./route-totals.ts";

/** What the dashboard reads of the admin state (the serve command replaces these on each apply). */
export interface DashboardSource {
  readonly model: object | undefined;
  readonly problems: readonly unknown[];
  readonly statuses: readonly unknown[];
}

export interface LiveStats {
  /** Unix milliseconds. */
  readonly generatedAt: number;
  /** Changes whenever the configuration, its problems or statuses change: the page then reloads them. */
  readonly version: number;
  /** Length of one chart step, and how many steps the window holds. */
  readonly sliceSeconds: number;
  readonly slices: number;
  /** What each route's rate, 5xx ratio and percentiles cover, in seconds (the newest slices). */
  readonly recentSeconds: number;
  readonly routes: readonly RouteWindow[];
}

export interface DashboardOptions {
  /** Most event streams open at once; default 16. */
  readonly maxStreams?: number;
  /** How often streams get a stats event; default 1000 ms. */
  readonly pushMs?: number;
  readonly sliceMs?: number;
  readonly slices?: number;
}

const encoder = new TextEncoder();
/** Events a stream may have waiting for a client that does not read before it is closed. */
const maxQueuedEvents = 30;

export class Dashboard {
  readonly history: RouteHistory;
  private readonly merged: MergedRouteStats;
  private peers: (() => Promise<ReadonlyMap<number, RouteTotals>>) | undefined;
  private peersReadAt = Number.NEGATIVE_INFINITY;
  private readonly streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  private pushTimer: ReturnType<typeof setInterval> | undefined;
  private readonly seen: [unknown, unknown, unknown] = [undefined, undefined, undefined];
  private version = 0;
  readonly maxStreams: number;
  private readonly pushMs: number;

  constructor(
    private readonly source: DashboardSource,
    private readonly table: RouteStatsTable,
    options: DashboardOptions = {},
  ) {
    this.merged = new MergedRouteStats(table);
    this.history = new RouteHistory(this.merged, options.sliceMs, options.slices, () => this.readPeers(0));
    this.maxStreams = options.maxStreams ?? 16;
    this.pushMs = options.pushMs ?? 1000;
  }

  /**
   * Where the other serving processes' counters come from (`--workers`: read by admin port each slice),
   * so the dashboard counts the whole gateway.
   */
  setPeers(read: () => Promise<ReadonlyMap<number, RouteTotals>>): void {
    this.peers = read;
  }

  /**
   * Read the workers' counters unless that was done less than `maxAgeMs` ago (the stats endpoint and the
   * pushes, however many clients, read them at most about once a second).
   */
  async readPeers(maxAgeMs = 900): Promise<void> {
    const read = this.peers;
    if (read === undefined || performance.now() - this.peersReadAt < maxAgeMs) return;
    this.peersReadAt = performance.now();
    this.merged.update(await read());
  }

  /** This process's own counters (what a worker answers at `/api/route-totals`). */
  ownTotals(): RouteTotals {
    return routeTotalsOf(this.table);
  }

  get openStreams(): number {
    return this.streams.size;
  }

  stats(now = Date.now()): LiveStats {
    const s = this.source;
    if (this.seen[0] !== s.model || this.seen[1] !== s.problems || this.seen[2] !== s.statuses) {
      this.seen[0] = s.model;
      this.seen[1] = s.problems;
      this.seen[2] = s.statuses;
      this.version++;
    }
    return {
      generatedAt: now,
      version: this.version,
      sliceSeconds: this.history.sliceMs / 1000,
      slices: this.history.slices,
      recentSeconds: (this.history.recentSlices * this.history.sliceMs) / 1000,
      routes: this.history.windows(),
    };
  }

  /** A `text/event-stream` response, or a 503 when `maxStreams` are already open. */
  events(signal: AbortSignal): Response {
    if (this.streams.size >= this.maxStreams)
      return new Response(`too many dashboard streams open (${this.maxStreams}); poll /api/stats\n`, {
        status: 503,
        headers: { "retry-after": "10", "content-type": "text/plain; charset=utf-8" },
      });
    let mine: ReadableStreamDefaultController<Uint8Array> | undefined;
    const forget = () => {
      if (mine !== undefined) this.streams.delete(mine);
      if (this.streams.size === 0 && this.pushTimer !== undefined) {
        clearInterval(this.pushTimer);
        this.pushTimer = undefined;
      }
    };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        mine = controller;
        this.streams.add(controller);
        controller.enqueue(encoder.encode(`retry: 2000\n${this.event()}`));
        this.pushTimer ??= setInterval(() => void this.readPeers().finally(() => this.push()), this.pushMs);
      },
      cancel: forget,
    });
    signal.addEventListener("abort", forget, { once: true });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  }

  close(): void {
    this.history.close();
    if (this.pushTimer !== undefined) clearInterval(this.pushTimer);
    this.pushTimer = undefined;
    for (const c of this.streams) {
      try {
        c.close();
      } catch {
        // already closed by the client
      }
    }
    this.streams.clear();
  }

  private event(): string {
    return `event: stats\ndata: ${JSON.stringify(this.stats())}\n\n`;
  }

  private push(): void {
    const bytes = encoder.encode(this.event());
    for (const c of [...this.streams]) {
      try {
        // A client that stopped reading: its queue would grow for ever; close it (EventSource reconnects).
        if ((c.desiredSize ?? 0) < -maxQueuedEvents) {
          this.streams.delete(c);
          c.close();
          continue;
        }
        c.enqueue(bytes);
      } catch {
        // A stream the client left: drop it (its cancel may not have run yet).
        this.streams.delete(c);
      }
    }
  }
}
