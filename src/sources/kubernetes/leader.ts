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

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it:
 * - every retry period (an eighth of the lease duration; client-go: 2 s of 15 s) each candidate reads the Lease; a holder whose record
 *   has not changed for a whole lease duration *as observed locally* is expired (local observation, so
 *   clocks of different nodes need not agree), and an empty holder means it was released;
 * - acquiring and renewing are updates with the read `resourceVersion`: of two candidates racing for an
 *   expired lease, one gets 409 Conflict and stays a follower;
 * - the leader renews on every tick and steps down when it could not renew for 2/3 of the lease
 *   duration, before any follower may take over; it releases the lease on `stop()` so a successor need
 *   not wait.
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
      this.#tick = this.#round().finally(() => this.#schedule(this.#durationMs / 8));
    }, ms);
  }

  async #round(): Promise<void> {
    try {
      if (await this.#tryAcquireOrRenew()) {
        this.#lastRenew = Date.now();
        this.#setLeading(true);
        return;
      }
    } catch (err) {
      log.warn("lease round failed", { error: (err as Error).message });
    }
    // Not renewed: a leader keeps leading only within the renew deadline.
    if (this.#leading && Date.now() - this.#lastRenew > (this.#durationMs * 2) / 3) this.#setLeading(false);
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const timeoutMs = Math.max(500, this.#durationMs / 8);
    const now = Date.now();
    const seconds = Math.max(1, Math.round(this.#durationMs / 1000));
    const got = await this.#client.get(this.#path, timeoutMs);
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
    const heldMs = (spec.leaseDurationSeconds ?? seconds) * 1000;
    if (!mine && holder !== "" && now - this.#observed.at < heldMs) return false; // held by a live leader
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
