/**
 * The WAF engine off the serving thread: one Bun Worker per process (engine-thread.ts), started when a
 * route first asks for a WAF, fed through a bounded queue. CRS costs about 1.7 ms of CPU a request; run
 * on the thread that serves every route, a loaded WAF route stalled the others (a route without a WAF
 * fell from 17,098 to 68 req/s, p50 0.20 → 55 ms, measured; docs/waf.md has the figures since).
 *
 * Never open. A full queue answers at once (`overloaded`: 503 with Retry-After). A worker that stops
 * answers nothing more: what it held and what comes until a new one is up are `unavailable` (503); it is
 * started again with backoff and given every live rule set again. A rule set the worker cannot build
 * makes its routes answer 503. What this cannot catch: a native crash inside the library takes the
 * whole process down, since a Worker is a thread of it (measured: a segfault in a Worker ends the process).
 */
import { logger } from "../observability/logger.ts";
import { countWorkerRestart } from "./decisions.ts";
import { type FromEngine, packRequest, type ToEngine, type WafRequest, type WafVerdict } from "./protocol.ts";

const log = logger.child({ component: "waf" });

/** `--waf-queue-limit`'s default: at ~1.7 ms a transaction, about half a second of work waiting. */
export const DEFAULT_QUEUE_LIMIT = 256;
/** First wait before a stopped worker is started again; doubled per failure in a row, up to the cap. */
const RESTART_FIRST_MS = 100;
const RESTART_CAP_MS = 10_000;

export type EngineAnswer =
  | { readonly kind: "verdict"; readonly verdict: WafVerdict }
  | { readonly kind: "overloaded" }
  | { readonly kind: "unavailable"; readonly why: string };

/** A rule set as the serving thread knows it: the key the worker builds it under, and its holders. */
export interface RuleSetHandle {
  readonly key: number;
  readonly directives: string;
  /** Compiled routes holding it (compiled.ts); at 0 the worker frees it. */
  holders: number;
  /** Why the worker could not build it; its routes answer 503 while set. */
  error: string | undefined;
  /** The worker has built it (reset while a new worker builds it again). */
  loaded: boolean;
  /** The routes that asked for it, for the log line when it fails. */
  readonly routes: Set<string>;
}

type Waiter = (answer: EngineAnswer) => void;

/** Why a WAF request answers 503 while a worker that was let go has not ended. */
const WAITING = "the previous WAF worker has not ended yet";

/** Workers whose threads have ended (their `close` event came). */
const closed = new WeakSet<Worker>();

export class EngineQueue {
  private limit = DEFAULT_QUEUE_LIMIT;
  private library = "";
  private worker: Worker | undefined;
  /**
   * Workers let go of (stopped, crashed, killed) whose threads have not ended yet. libmodsecurity's rules
   * parser is not reentrant (flex's global scanner: two threads parsing at once end the whole process),
   * so no new worker starts while one of these may still be inside the library.
   */
  private readonly ending = new Set<Worker>();
  /** A start was asked for while `ending` was not empty: made when the last of them ends. */
  private startWanted = false;
  /** Why the worker is down until its restart; new requests answer 503 meanwhile. */
  private down: string | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private failuresInARow = 0;
  private readonly pending = new Map<number, Waiter>();
  private nextId = 1;
  private nextKey = 1;
  private readonly handles = new Map<string, RuleSetHandle>();
  private readonly byKey = new Map<number, RuleSetHandle>();
  /** Called when a rule set's load answer comes in and when the worker stops or starts (statuses). */
  private readonly healthListeners = new Set<() => void>();

  /** `--waf-queue-limit`: transactions sent to the worker and not yet answered. */
  configure(opts: { readonly limit: number }): void {
    this.limit = Math.max(1, Math.trunc(opts.limit));
  }

  /** The rule set for `directives`, held once more; the worker starts (or is told) to build it. */
  acquire(directives: string, route: string, library: string): RuleSetHandle {
    this.library = library;
    let h = this.handles.get(directives);
    if (h === undefined) {
      h = { key: this.nextKey++, directives, holders: 0, error: undefined, loaded: false, routes: new Set() };
      this.handles.set(directives, h);
      this.byKey.set(h.key, h);
      this.post({ t: "load", key: h.key, directives });
    }
    // Started now, so the rule sets load before the first request (a new worker loads every one held).
    if (this.worker === undefined && this.down === undefined) this.start();
    h.routes.add(route);
    h.holders++;
    return h;
  }

  /** A compiled route let go of `h`; the last one has the worker free it. */
  release(h: RuleSetHandle): void {
    h.holders--;
    if (h.holders > 0 || this.handles.get(h.directives) !== h) return;
    this.handles.delete(h.directives);
    this.byKey.delete(h.key);
    if (this.worker !== undefined) this.post({ t: "release", key: h.key });
  }

  /** The rule set held for `directives`, if any (its load state, for the policy status). */
  ruleSet(directives: string): RuleSetHandle | undefined {
    return this.handles.get(directives);
  }

  /**
   * Resolves once no worker that was let go of still runs (tests that parse rules on their own thread
   * first wait for this: two threads in the library's parser at once end the process).
   */
  async whenEnded(): Promise<void> {
    while (this.ending.size > 0) await Bun.sleep(10);
  }

  /** Why the worker is down (every WAF request answers 503) until it is restarted; undefined when up. */
  get downReason(): string | undefined {
    return this.down ?? (this.startWanted ? WAITING : undefined);
  }

  /** `changed` is called on each change of what `ruleSet()` and `downReason` say; returns the unsubscribe. */
  onHealthChange(changed: () => void): () => void {
    this.healthListeners.add(changed);
    return () => this.healthListeners.delete(changed);
  }

  /** Rule sets held now (tests). */
  get ruleSets(): number {
    return this.handles.size;
  }

  /** Transactions waiting for the worker (tests). */
  get waiting(): number {
    return this.pending.size;
  }

  /** The request through the worker: its verdict, or why it could not be had (never a pass). */
  inspect(h: RuleSetHandle, req: WafRequest): Promise<EngineAnswer> {
    if (h.error !== undefined) return Promise.resolve({ kind: "unavailable", why: h.error });
    if (this.down !== undefined) return Promise.resolve({ kind: "unavailable", why: this.down });
    if (this.pending.size >= this.limit) return Promise.resolve({ kind: "overloaded" });
    if (this.worker === undefined) this.start();
    if (this.worker === undefined) return Promise.resolve({ kind: "unavailable", why: WAITING });
    const packed = packRequest(req);
    return this.send({ t: "inspect", id: this.nextId, key: h.key, req: packed }, [packed.bytes.buffer]);
  }

  /** Tests: the worker busy for `ms`, holding one queue slot; resolves when it is free again. */
  hold(ms: number): Promise<EngineAnswer> {
    if (this.down !== undefined) return Promise.resolve({ kind: "unavailable", why: this.down });
    if (this.worker === undefined) this.start();
    if (this.worker === undefined) return Promise.resolve({ kind: "unavailable", why: WAITING });
    return this.send({ t: "hold", id: this.nextId, ms });
  }

  /** Tests: the worker dies as an uncaught error in it would end it (`crash`), or is ended (`kill`). */
  crash(how: "crash" | "kill"): void {
    if (how === "crash") this.post({ t: "crash" });
    else this.worker?.terminate();
  }

  /**
   * Gateway shutdown: the worker frees its rule sets and ends (ended outright if it has not within a
   * second); what it held answers 503. A later WAF request starts one again.
   */
  stop(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.down = undefined;
    this.failuresInARow = 0;
    const w = this.worker;
    this.worker = undefined;
    if (w !== undefined) {
      w.unref();
      this.letGo(w);
      w.postMessage({ t: "exit" } satisfies ToEngine);
      setTimeout(() => w.terminate(), 1000).unref();
    }
    this.failPending("the gateway is stopping");
  }

  private send(m: ToEngine & { id: number }, transfer: ArrayBuffer[] = []): Promise<EngineAnswer> {
    this.nextId++;
    const { promise, resolve } = Promise.withResolvers<EngineAnswer>();
    if (this.pending.size === 0) this.worker?.ref();
    this.pending.set(m.id, resolve);
    this.post(m, transfer);
    return promise;
  }

  /** The answer to `id` is in (or will never come): its waiter goes, and the worker's hold with the last. */
  private settled(id: number): Waiter | undefined {
    const waiter = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    return waiter;
  }

  private post(m: ToEngine, transfer: ArrayBuffer[] = []): void {
    this.worker?.postMessage(m, transfer);
  }

  /** `w` is no longer ours; a start waits until its thread has ended (`ending`). */
  private letGo(w: Worker): void {
    if (closed.has(w)) return;
    this.ending.add(w);
    w.addEventListener("close", () => {
      this.ending.delete(w);
      if (this.ending.size > 0 || !this.startWanted) return;
      this.startWanted = false;
      if (this.worker === undefined && this.down === undefined && this.handles.size > 0) this.start();
      this.healthChanged();
    });
  }

  private start(): void {
    if (this.ending.size > 0) {
      if (!this.startWanted)
        log.warn("WAF worker not started yet: the previous one has not ended (WAF requests answer 503)");
      this.startWanted = true;
      return;
    }
    const w = new Worker(engineThreadScript());
    this.worker = w;
    // First of its listeners: the others see the thread as ended.
    w.addEventListener("close", () => closed.add(w));
    // Held (ref) only while answers are awaited (send, settled): an idle engine keeps no process alive.
    // Unreferenced while awaited, Bun 1.4.5 polls for its messages: the serving thread then burnt about
    // as much CPU as the engine (1,340 µs a message against 50 held, measured).
    w.unref();
    w.onmessage = (event: MessageEvent<FromEngine>) => {
      if (this.worker === w) this.answer(event.data);
    };
    w.addEventListener("error", (event) => this.stopped(w, `it failed: ${event.message}`));
    w.addEventListener("close", (event) => this.stopped(w, `it exited (${event.code})`));
    w.postMessage({ t: "init", library: this.library } satisfies ToEngine);
    for (const h of this.handles.values()) {
      h.loaded = false;
      w.postMessage({ t: "load", key: h.key, directives: h.directives } satisfies ToEngine);
    }
  }

  private healthChanged(): void {
    for (const changed of this.healthListeners) changed();
  }

  private answer(m: FromEngine): void {
    if (m.t === "loaded" || m.t === "load-failed") {
      const h = this.byKey.get(m.key);
      if (h === undefined) return;
      const was = h.error;
      const error = m.t === "load-failed" ? m.error : undefined;
      h.error = error === undefined ? undefined : `the rule set did not load: ${error}`;
      h.loaded = error === undefined;
      if (error !== undefined && h.error !== was)
        log.error("WAF rule set did not load: its routes answer 503", {
          routes: [...h.routes].slice(0, 10),
          error,
        });
      this.healthChanged();
      return;
    }
    const waiter = this.settled(m.id);
    if (waiter === undefined) return;
    this.failuresInARow = 0;
    if (m.t === "verdict") waiter({ kind: "verdict", verdict: m.verdict });
    else if (m.t === "failed") waiter({ kind: "unavailable", why: m.error });
    else waiter({ kind: "unavailable", why: "held (test)" });
  }

  /** The worker `w` ended without being asked: fail closed now, start a new one after the backoff. */
  private stopped(w: Worker, how: string): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    this.letGo(w);
    w.terminate();
    const delay = Math.min(RESTART_CAP_MS, RESTART_FIRST_MS * 2 ** this.failuresInARow);
    this.failuresInARow++;
    this.down = `the WAF worker stopped (${how}); restarting`;
    countWorkerRestart();
    log.error("WAF worker stopped: its requests answer 503 until it is restarted", {
      reason: how,
      pending: this.pending.size,
      restartInMs: delay,
    });
    this.failPending(this.down);
    this.healthChanged();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.down = undefined;
      if (this.handles.size > 0) this.start();
      this.healthChanged();
    }, delay);
    this.restartTimer.unref();
  }

  private failPending(why: string): void {
    const waiters = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiters) w({ kind: "unavailable", why });
  }
}

/**
 * Where the worker's script is. In the executable (scripts/build.ts names it as a second entrypoint) it
 * sits in Bun's embedded file system at its path below src/, the entrypoints' common folder, while this
 * module is bundled into one file at that folder's root: resolving beside this module would miss it.
 */
function engineThreadScript(): string | URL {
  const beside = new URL("./engine-thread.ts", import.meta.url);
  return beside.pathname.startsWith("/$bunfs/") ? "/$bunfs/root/waf/engine-thread.ts" : beside;
}

/** The process's queue (one engine worker per process). */
export const engineQueue = new EngineQueue();
