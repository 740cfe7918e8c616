/**
 * The last-request times of the `--workers` processes of one replica, gathered by its primary: the
 * primary is the only process of a replica that runs the leader election (workers never do,
 * sources/kubernetes/cluster.ts), so the only one whose scale-down loop may act. Before it scales a
 * workload down it asks every worker's admin listener (loopback, `/debug/activation`) for the backend's
 * last request (an absolute time: one machine, one clock) and its requests in flight or held (those
 * count as now). A worker that has not reported its admin port yet, does not answer within the timeout,
 * or does not know the backend yet (it compiles on its own) makes the answer "unknown": never scaled
 * down on a guess.
 */
import type { ActivitySource } from "./scale-down.ts";

interface WorkerBackend {
  readonly backend?: unknown;
  readonly lastRequestAt?: unknown;
  readonly inflight?: unknown;
  readonly held?: unknown;
}

export class WorkerActivity implements ActivitySource {
  readonly #workers: number;
  readonly #admins: ReadonlyMap<number, number>;
  readonly #timeoutMs: number;

  /** `workers`: how many worker processes there are; `admins`: worker id → admin port, filled as they report. */
  constructor(workers: number, admins: ReadonlyMap<number, number>, timeoutMs = 1_000) {
    this.#workers = workers;
    this.#admins = admins;
    this.#timeoutMs = timeoutMs;
  }

  async lastActivity(backendId: string): Promise<number | undefined> {
    if (this.#admins.size < this.#workers) return undefined;
    const reports = await Promise.all([...this.#admins.values()].map((port) => this.#report(port)));
    let last = 0;
    for (const report of reports) {
      const b = report?.find((x) => x.backend === backendId);
      if (b === undefined || typeof b.lastRequestAt !== "number") return undefined;
      const busy = b.inflight !== 0 || b.held !== 0;
      last = Math.max(last, busy ? Date.now() : b.lastRequestAt);
    }
    return last;
  }

  async #report(port: number): Promise<WorkerBackend[] | undefined> {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/debug/activation`, {
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      if (!res.ok) return undefined;
      const body: unknown = await res.json();
      return Array.isArray(body) ? (body as WorkerBackend[]) : undefined;
    } catch {
      return undefined;
    }
  }
}
