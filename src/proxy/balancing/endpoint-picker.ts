/**
 * The endpoint pickers: one per route and backend (Balancing.algorithm), each over the backend's
 * `bases`. `pick` returns an index; `avoid` (-1: none) is an endpoint a retry should not go back to, left
 * out when another exists. Load-aware pickers are told when a request starts and ends (`started`,
 * `ended`); the others ignore it.
 */
import type { CompiledBackend } from "../table.ts";
import { addSample, decayedEwma, type EndpointStats, statsOf } from "./endpoint-stats.ts";
import type { BalanceInput } from "./request-input.ts";

export interface EndpointPicker {
  pick(input: BalanceInput, avoid: number): number;
  /** A request went to endpoint `i`. */
  started(i: number): void;
  /** That request got its response headers (or failed) after `ms`. */
  ended(i: number, ms: number, failed: boolean): void;
}

const noop = (): void => {};

/** Round robin over the backend's shared position (the same turn order as `nextEndpoint`). */
export function roundRobinPicker(backend: CompiledBackend): EndpointPicker {
  return {
    pick(_input, avoid) {
      const n = backend.bases.length;
      let i = backend.next;
      if (i >= n) i = 0;
      if (i === avoid && n > 1) i = i + 1 >= n ? 0 : i + 1;
      backend.next = i + 1 >= n ? 0 : i + 1;
      return i;
    },
    started: noop,
    ended: noop,
  };
}

/** An endpoint drawn at random (Envoy's RANDOM); with `avoid`, one of the others. */
export function randomPicker(backend: CompiledBackend): EndpointPicker {
  return {
    pick(_input, avoid) {
      const n = backend.bases.length;
      if (n <= 1) return 0;
      if (avoid < 0 || avoid >= n) return Math.floor(Math.random() * n);
      const i = Math.floor(Math.random() * (n - 1));
      return i >= avoid ? i + 1 : i;
    },
    started: noop,
    ended: noop,
  };
}

/**
 * Of two endpoints drawn at random, the better one ("power of two choices": nearly the balance of
 * checking them all, at the cost of two). With `avoid`, the other of the two when it is drawn.
 */
export function twoChoices(n: number, avoid: number, better: (a: number, b: number) => boolean): number {
  if (n <= 1) return 0;
  const a = Math.floor(Math.random() * n);
  let b = Math.floor(Math.random() * (n - 1));
  if (b >= a) b++;
  if (a === avoid) return b;
  if (b === avoid) return a;
  return better(b, a) ? b : a;
}

/** Load-aware pickers read one stats record per endpoint (endpoint-stats.ts). */
abstract class LoadPicker implements EndpointPicker {
  protected readonly stats: readonly EndpointStats[];
  constructor(backend: CompiledBackend) {
    this.stats = backend.bases.map(statsOf);
  }
  abstract pick(input: BalanceInput, avoid: number): number;
  started(i: number): void {
    const s = this.stats[i];
    if (s !== undefined) s.inFlight++;
  }
  ended(i: number, ms: number, failed: boolean): void {
    const s = this.stats[i];
    if (s === undefined) return;
    if (s.inFlight > 0) s.inFlight--;
    this.sample(s, ms, failed);
  }
  protected sample(_s: EndpointStats, _ms: number, _failed: boolean): void {}
}

/** Least request: the endpoint with fewer requests in flight of two drawn at random (Envoy's default). */
export class LeastRequestPicker extends LoadPicker {
  pick(_input: BalanceInput, avoid: number): number {
    const s = this.stats;
    return twoChoices(
      s.length,
      avoid,
      (a, b) => (s[a] as EndpointStats).inFlight < (s[b] as EndpointStats).inFlight,
    );
  }
}

/**
 * A failed attempt counts as at least this long. ingress-nginx counts it as its real (often tiny) time,
 * which draws traffic to an endpoint that refuses connections at once; here it pushes traffic away.
 */
export const EWMA_FAILURE_MS = 1000;

/**
 * ingress-nginx's `ewma` (rootfs/etc/nginx/lua/balancer/ewma.lua): of two endpoints drawn at random, the
 * one whose moving average of response time, decayed toward 0 while it gets no samples (so an idle
 * endpoint is tried again), is lower. An endpoint never measured starts at the average of its
 * measured peers (ingress-nginx's slow start), so a new pod is not flooded. Samples are response-header
 * times here (ingress-nginx adds connect and whole-response time).
 */
export class EwmaPicker extends LoadPicker {
  constructor(backend: CompiledBackend) {
    super(backend);
    let sum = 0;
    let measured = 0;
    for (const s of this.stats)
      if (s.ewma >= 0) {
        sum += s.ewma;
        measured++;
      }
    if (measured === 0) return;
    const now = performance.now();
    for (const s of this.stats)
      if (s.ewma < 0) {
        s.ewma = sum / measured;
        s.touched = now;
      }
  }
  pick(_input: BalanceInput, avoid: number): number {
    const s = this.stats;
    const now = performance.now();
    return twoChoices(
      s.length,
      avoid,
      (a, b) => decayedEwma(s[a] as EndpointStats, now) < decayedEwma(s[b] as EndpointStats, now),
    );
  }
  protected override sample(s: EndpointStats, ms: number, failed: boolean): void {
    addSample(s, failed ? Math.max(ms, EWMA_FAILURE_MS) : ms, performance.now());
  }
}
