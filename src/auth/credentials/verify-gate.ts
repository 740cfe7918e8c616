/**
 * At most `running` slow verifications (bcrypt) at once, at most `waiting` more queued; past that the
 * request is turned away at once (the caller answers 503 with Retry-After) instead of queueing without
 * bound. A flood of wrong passwords therefore costs at most `running` thread-pool workers and never
 * holds up users already verified: their results are cached and answered without coming here.
 */

export class VerifyGate {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    readonly running = 2,
    readonly waiting = 32,
  ) {}

  /** Verifications running now and waiting (metrics, tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.active, waiting: this.queue.length };
  }

  /**
   * Runs `work` when a slot is free; undefined (not run) when the queue is full. The slot is released
   * however `work` ends.
   */
  run<T>(work: () => Promise<T>): Promise<T> | undefined {
    if (this.active < this.running) {
      this.active++;
      return this.start(work);
    }
    if (this.queue.length >= this.waiting) return undefined;
    // The releasing verification hands its slot straight to the first waiter (`active` unchanged),
    // so a newcomer can never slip in between and run one more than `running`.
    return new Promise<void>((resolve) => this.queue.push(resolve)).then(() => this.start(work));
  }

  private async start<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.active--;
    }
  }
}
