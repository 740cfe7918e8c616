/**
 * Trailing debounce with a cap, shared by the sources: a burst of changes causes one rebuild `waitMs`
 * after the last change (latest wins), and a source that never stops changing is still rebuilt at least
 * every `max(10 × waitMs, 1 s)`.
 */
export class CappedDebounce {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #burstStart: number | undefined;

  constructor(
    private readonly waitMs: number,
    private readonly run: () => void,
  ) {}

  /** Something changed: (re)schedule the run. */
  trigger(): void {
    const now = Date.now();
    this.#burstStart ??= now;
    const maxWait = Math.max(this.waitMs * 10, 1000);
    const wait = Math.max(0, Math.min(this.waitMs, this.#burstStart + maxWait - now));
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#burstStart = undefined;
      this.run();
    }, wait);
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#burstStart = undefined;
  }
}
