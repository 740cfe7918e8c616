import { hostname } from "node:os";
import { logger } from "../../observability/logger.ts";
import { describeFailure, type KubeClient } from "./client.ts";
import { leaseResource, resourcePath } from "./resources.ts";

const log = logger.child({ component: "leader-election" });

export interface LeaderElectionOptions {
  readonly namespace: string;
  /** Lease name. Default `gatehouse-leader`. */
  readonly name?: string;
  /** Who we are in `spec.holderIdentity`. Default `<hostname>_<pid>` (the pod name in a cluster). */
  readonly identity?: string;
  /** How long a lease holds without renewal. Default 15 s; written as whole seconds (at least 1). */
  readonly leaseDurationMs?: number;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
}

interface Lease {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** `metav1.MicroTime`: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

export function defaultIdentity(): string {
  return `${process.env.POD_NAME ?? hostname()}_${process.pid}`;
}

/** Each candidate reads the Lease every tenth of the lease duration. */
const retryShare = 1 / 10;
/** A follower takes over a record unchanged for 70% of its duration… */
const expiryShare = 0.7;
/** …and a leader that could not renew for half of it has stopped writing by then (20% margin). */
const renewShare = 0.5;

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it, with the timings chosen so
 * a follower takes over within the lease duration of the leader's death:
 * - every retry period (a tenth of the lease duration) each candidate reads the Lease; a holder whose
 *   record has not changed for 70% of its duration *as observed locally* (clocks of different nodes
 *   need not agree) is expired, and an empty holder means it was released. The observation time is taken
 *   after the read answered, so it is never earlier than the renewal it saw; a follower's next read is
 *   timed for the moment the record would expire. Worst case from the leader's last renewal: one retry
 *   period until a read sees it, plus 70% — 80% of the duration plus two round trips;
 * - acquiring and renewing are updates with the read `resourceVersion`: of two candidates racing for an
 *   expired lease, one gets 409 Conflict and stays a follower;
 * - the leader renews on every round and stops writing (a timer, not the next round) half a duration
 *   after the start of its last successful renewal, which is before any follower may take over;
 *   it releases the lease on `stop()` so a successor need not wait.
 * API errors never throw out of here; they only cost leadership.
 */
export class LeaderElector {
  readonly identity: string;
  readonly #client: KubeClient;
  readonly #opts: LeaderElectionOptions;
  readonly #durationMs: number;
  readonly #path: string;
  #leading = false;
  #lastRenew = 0;
  #observed: { record: string; at: number } | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #deadline: ReturnType<typeof setTimeout> | undefined;
  /** When a follower's next read is due (the observed record's expiry), if sooner than a retry period. */
  #nextRoundMs: number | undefined;
  #stopped = true;
  #tick: Promise<void> = Promise.resolve();

  constructor(client: KubeClient, opts: LeaderElectionOptions) {
    this.#client = client;
    this.#opts = opts;
    this.identity = opts.identity ?? defaultIdentity();
    this.#durationMs = Math.max(1000, opts.leaseDurationMs ?? 15_000);
    this.#path = resourcePath(leaseResource, opts.namespace, opts.name ?? "gatehouse-leader");
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  /** Stop campaigning; a leader releases the lease (holder emptied) so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#deadline);
    await this.#tick;
    if (!this.#leading) return;
    this.#setLeading(false);
    try {
      const res = await this.#client.get(this.#path, 2000);
      const lease = res.body as Lease;
      if (res.status !== 200 || lease.spec?.holderIdentity !== this.identity) return;
      const spec = {
        ...lease.spec,
        holderIdentity: "",
        leaseDurationSeconds: 1,
        renewTime: microTime(Date.now()),
      };
      await this.#client.request("PUT", this.#path, { body: { ...lease, spec }, timeoutMs: 2000 });
    } catch (err) {
      log.warn("could not release the lease", { error: (err as Error).message });
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#round().finally(() => {
        const retry = this.#durationMs * retryShare;
        this.#schedule(Math.max(10, Math.min(retry, this.#nextRoundMs ?? retry)));
      });
    }, ms);
  }

  async #round(): Promise<void> {
    const started = Date.now();
    this.#nextRoundMs = undefined;
    try {
      if (await this.#tryAcquireOrRenew()) {
        // The start of the round: the renewal cannot have reached the API server before it, so no
        // follower can have observed it earlier either.
        this.#lastRenew = started;
        this.#setLeading(true);
        clearTimeout(this.#deadline);
        const deadlineMs = this.#durationMs * renewShare - (Date.now() - started);
        this.#deadline = setTimeout(() => this.#setLeading(false), Math.max(0, deadlineMs));
        return;
      }
    } catch (err) {
      log.warn("lease round failed", { error: (err as Error).message });
    }
    // Not renewed: a leader keeps leading only within the renew deadline (the timer enforces it too).
    if (this.#leading && Date.now() - this.#lastRenew > this.#durationMs * renewShare)
      this.#setLeading(false);
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const timeoutMs = Math.max(500, this.#durationMs * retryShare);
    const seconds = Math.max(1, Math.round(this.#durationMs / 1000));
    const got = await this.#client.get(this.#path, timeoutMs);
    // After the answer: whatever record it shows was written before this moment.
    const now = Date.now();
    if (got.status === 404) {
      const [namespace, name] = [this.#opts.namespace, this.#opts.name ?? "gatehouse-leader"];
      const body = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace },
        spec: {
          holderIdentity: this.identity,
          leaseDurationSeconds: seconds,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        },
      };
      const res = await this.#client.request("POST", resourcePath(leaseResource, namespace), {
        body,
        timeoutMs,
      });
      if (res.status === 201 || res.status === 200) return true;
      if (res.status !== 409) log.warn("cannot create the lease", { status: describeFailure(res) });
      return false;
    }
    if (got.status !== 200) {
      log.warn("cannot read the lease", { status: describeFailure(got) });
      return false;
    }
    const lease = got.body as Lease;
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? "";
    const record = JSON.stringify([holder, spec.renewTime, spec.leaseDurationSeconds]);
    if (this.#observed?.record !== record) this.#observed = { record, at: now };
    const mine = holder === this.identity;
    if (!mine && this.#leading) this.#setLeading(false); // someone else holds it: step down at once
    const expiresMs = (spec.leaseDurationSeconds ?? seconds) * 1000 * expiryShare;
    if (!mine && holder !== "" && now - this.#observed.at < expiresMs) {
      this.#nextRoundMs = this.#observed.at + expiresMs - now; // held by a live leader: look again then
      return false;
    }
    const next = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: seconds,
        renewTime: microTime(now),
        ...(mine ? {} : { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
      },
    };
    const res = await this.#client.request("PUT", this.#path, { body: next, timeoutMs });
    if (res.status === 200) return true;
    if (res.status !== 409) log.warn("cannot update the lease", { status: describeFailure(res) });
    return false;
  }

  #setLeading(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    log.info(leading ? "became the leader; writing status" : "no longer the leader; not writing status", {
      identity: this.identity,
    });
    if (leading) this.#opts.onStartedLeading?.();
    else this.#opts.onStoppedLeading?.();
  }
}
