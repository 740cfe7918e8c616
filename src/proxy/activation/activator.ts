/**
 * One backend's activation state in this process (docs/scale-to-zero.md): the requests held while its
 * workload wakes (a FIFO queue bounded by `queueLimit`, each waiting at most `maxHoldMs`), the wake itself
 * (one scale call at a time, retried while requests wait, given up on at once when it can never succeed),
 * and what the scale-down needs: requests in flight and the time of the last one. Kept across compiles
 * (registry.ts) so a reload never drops a held request.
 */
import type { BackendActivation } from "../../model/index.ts";
import type { WorkloadRef, WorkloadScaler } from "./scaler.ts";

/** Why a held request was not released: queue full, hold time over, the wake cannot succeed. */
export type HoldRefusal = "overflow" | "timeout" | "refused";

interface Waiter {
  readonly resolve: (outcome: readonly string[] | HoldRefusal) => void;
  readonly timer: ReturnType<typeof setTimeout>;
  readonly since: number;
}

/** How long endpoints seen on the short path are trusted over a compile that shows none (ms). */
const SHORT_PATH_TRUST_MS = 5_000;
/** Between two wake calls while requests wait and the API answered with a passing failure. */
const WAKE_RETRY_MS = 500;
/** A request after this long without one is told to the other replicas at once, not on the next tick. */
const QUIET_MS = 1_000;
/** After a permanent failure, requests are refused at once for this long before the wake is tried again. */
const REFUSE_MS = 1_000;

export class BackendActivator {
  readonly backendId: string;
  config: BackendActivation;
  /** The Service the backend is a port of (its namespace is the workload's). */
  service: { readonly namespace: string; readonly name: string };
  /** Requests forwarded and not answered yet; the workload is never scaled down while above 0. */
  inflight = 0;
  /** Date.now() of the last request's start or end (creation counts: a new policy does not scale at once). */
  lastRequestMs = Date.now();
  /** When the gateway last raised the workload from 0 (the scale-down's cooldown counts from it). */
  lastWakeMs = 0;
  /** Why waking cannot succeed right now (403, 404), for the policy's condition; undefined: it can. */
  scaleProblem: string | undefined;
  /** Totals for the metrics. */
  readonly totals = {
    requests: 0,
    held: 0,
    released: 0,
    timedOut: 0,
    overflowed: 0,
    refused: 0,
    activations: 0,
    scaleDowns: 0,
  };
  /** Ready-to-first-release times of the last wakes (ms), newest last, for /debug and the docs' numbers. */
  readonly wakeLatencies: number[] = [];
  #bases: readonly string[] = [];
  #shortPath: { bases: readonly string[]; until: number } | undefined;
  #queue: Waiter[] = [];
  #waking = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #refusedUntil = 0;
  readonly #scaler: () => WorkloadScaler | undefined;
  readonly #changed: () => void;
  readonly #woke: () => void;

  constructor(
    backendId: string,
    config: BackendActivation,
    service: { readonly namespace: string; readonly name: string },
    scaler: () => WorkloadScaler | undefined,
    changed: () => void,
    /** Traffic after a quiet spell (a request held, or the first in a second): tell the other replicas now. */
    woke: () => void = () => {},
  ) {
    this.backendId = backendId;
    this.config = config;
    this.service = service;
    this.#scaler = scaler;
    this.#changed = changed;
    this.#woke = woke;
  }

  get workload(): WorkloadRef {
    return { ...this.config.workload, namespace: this.service.namespace };
  }

  /** Requests waiting right now. */
  get held(): number {
    return this.#queue.length;
  }

  /** The endpoints to send to: the compiled ones, or fresher ones the short path saw. */
  get bases(): readonly string[] {
    if (this.#bases.length > 0) return this.#bases;
    const s = this.#shortPath;
    return s !== undefined && s.until > Date.now() ? s.bases : this.#bases;
  }

  /** After a compile: the backend's settings and endpoints; endpoints release what waits. */
  update(
    config: BackendActivation,
    service: { readonly namespace: string; readonly name: string },
    bases: readonly string[],
  ): void {
    this.config = config;
    this.service = service;
    this.#bases = bases;
    if (bases.length > 0) {
      this.#shortPath = undefined;
      this.#release(bases);
    }
  }

  /** No endpoints compiled for the backend: the short path is what may give it some before the next compile. */
  get compiledEmpty(): boolean {
    return this.#bases.length === 0;
  }

  /**
   * The short path: an EndpointSlice showed these ready endpoints before the next compile (kube source).
   * None (the slice emptied or deleted, as at a scale to 0 by anyone): what it showed before is no longer
   * trusted either, so requests are held again rather than sent to a pod that is gone.
   */
  endpointsReady(bases: readonly string[], readyAtMs = performance.now()): void {
    if (this.#bases.length > 0) return;
    if (bases.length === 0) {
      this.#shortPath = undefined;
      return;
    }
    this.#shortPath = { bases, until: Date.now() + SHORT_PATH_TRUST_MS };
    this.#release(bases, readyAtMs);
  }

  /**
   * Wait for endpoints: at once when there are some, else queued (and the workload woken). Resolves to
   * the endpoints, or why not; never waits longer than `maxHoldMs`. `signal`: the request is gone (the
   * client left, its body was refused): it leaves the queue at once ("refused", not counted).
   */
  hold(signal?: AbortSignal): Promise<readonly string[] | HoldRefusal> {
    const ready = this.bases;
    if (ready.length > 0) return Promise.resolve(ready);
    if (this.#refusedUntil > Date.now()) {
      this.totals.refused++;
      return Promise.resolve("refused");
    }
    if (this.#queue.length >= this.config.queueLimit) {
      this.totals.overflowed++;
      return Promise.resolve("overflow");
    }
    this.totals.held++;
    // A held request is traffic: the leader must not scale down the workload this one is waking.
    this.lastRequestMs = Date.now();
    this.#woke();
    const outcome = new Promise<readonly string[] | HoldRefusal>((resolve) => {
      const waiter: Waiter = {
        resolve,
        since: performance.now(),
        timer: setTimeout(() => {
          const i = this.#queue.indexOf(waiter);
          if (i < 0) return;
          this.#queue.splice(i, 1);
          this.totals.timedOut++;
          resolve("timeout");
        }, this.config.maxHoldMs),
      };
      this.#queue.push(waiter);
      signal?.addEventListener(
        "abort",
        () => {
          const i = this.#queue.indexOf(waiter);
          if (i < 0) return;
          this.#queue.splice(i, 1);
          clearTimeout(waiter.timer);
          this.totals.held--;
          resolve("refused");
        },
        { once: true },
      );
    });
    this.#wake();
    return outcome;
  }

  /** A request is forwarded to the backend (held ones once released). */
  begin(): void {
    this.inflight++;
    this.totals.requests++;
    const now = Date.now();
    if (now - this.lastRequestMs > QUIET_MS) this.#woke();
    this.lastRequestMs = now;
  }

  /** Its answer came (or it failed). */
  end(): void {
    this.inflight--;
    this.lastRequestMs = Date.now();
  }

  /** The leader scaled the workload to 0: endpoints seen on the short path are no longer trusted. */
  asleep(): void {
    this.#shortPath = undefined;
  }

  /** The activator left the registry (its backend is no longer configured): nothing may stay held. */
  close(): void {
    clearTimeout(this.#retry);
    const waiting = this.#queue;
    this.#queue = [];
    for (const w of waiting) {
      clearTimeout(w.timer);
      this.totals.refused++;
      w.resolve("refused");
    }
  }

  /** Held requests in order, the oldest first (each continues in the order it was resolved). */
  #release(bases: readonly string[], readyAtMs?: number): void {
    const waiting = this.#queue;
    if (waiting.length === 0) return;
    this.#queue = [];
    clearTimeout(this.#retry);
    if (readyAtMs !== undefined) {
      this.wakeLatencies.push(performance.now() - readyAtMs);
      if (this.wakeLatencies.length > 20) this.wakeLatencies.shift();
    }
    for (const w of waiting) {
      clearTimeout(w.timer);
      this.totals.released++;
      w.resolve(bases);
    }
  }

  /** One scale call at a time while requests wait; the gateway only ever raises 0 to 1. */
  #wake(): void {
    const scaler = this.config.scaler === "Gateway" ? this.#scaler() : undefined;
    if (scaler === undefined || this.#waking) return;
    this.#waking = true;
    void scaler
      .wake(this.workload)
      .catch((err: unknown) => ({ ok: false as const, permanent: false, reason: String(err) }))
      .then((out) => {
        this.#waking = false;
        if (out.ok) {
          if (out.changed) {
            this.totals.activations++;
            this.lastWakeMs = Date.now();
          }
          this.#setProblem(undefined);
          return;
        }
        if (out.permanent) {
          this.#setProblem(out.reason);
          this.#refusedUntil = Date.now() + REFUSE_MS;
          this.close();
          return;
        }
        // The API server is down or slow: try again while someone waits (each waits its hold time only).
        clearTimeout(this.#retry);
        this.#retry = setTimeout(() => this.#queue.length > 0 && this.#wake(), WAKE_RETRY_MS);
      });
  }

  #setProblem(problem: string | undefined): void {
    if (problem === this.scaleProblem) return;
    this.scaleProblem = problem;
    this.#changed();
  }
}
