/**
 * Reconcilers that write to the API server (the status writer, the managed Gateway Services) run one
 * pass at a time: a kick while a pass runs asks for exactly one more pass after it, so a burst of
 * changes costs at most two passes and a pass never races another over the same objects.
 */
export class OnePassAtATime {
  #running: Promise<void> | undefined;
  #again = false;

  /**
   * @param pass one reconciliation pass
   * @param kickAgain called after a pass when a kick came in meanwhile (the owner re-checks its own
   *   conditions, such as leadership, before running again)
   */
  constructor(
    private readonly pass: () => Promise<void>,
    private readonly kickAgain: () => void,
  ) {}

  /** Start a pass now, or one more after the running one. */
  run(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.pass().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.kickAgain();
      }
    });
  }

  /** Resolves once no pass is running. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }
}
