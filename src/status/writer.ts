import { logger } from "../observability/logger.ts";
import { describeFailure, type KubeClient } from "../sources/kubernetes/client.ts";
import { resourcePath, statusResources } from "../sources/kubernetes/resources.ts";
import { canonical, desiredStatus, replacementPatch, sameJson } from "./merge.ts";
import { OnePassAtATime } from "./one-pass.ts";
import type { ObjectStatus } from "./types.ts";

const log = logger.child({ component: "status-writer" });

/** What the writer needs of a cached object. */
export interface CachedObject {
  readonly metadata?: { readonly resourceVersion?: string };
  readonly status?: unknown;
}

export interface StatusWriterOptions {
  readonly client: KubeClient;
  /** The informer's copy of an object (with its current `.status`); undefined when it is gone. */
  readonly lookup: (kind: string, namespace: string, name: string) => CachedObject | undefined;
  /** Our `controllerName`: route parent entries of other controllers are left alone. */
  readonly controllerName: string;
  /** Only the leader writes; checked before every write. */
  readonly isLeader: () => boolean;
  readonly now?: () => Date;
}

/**
 * Writes the `.status` translation computed back to the API server, on the leader only. Each pass
 * compares every object's desired status (old `lastTransitionTime` kept where a condition's status did
 * not change) with its cached status and patches `/status` only where they differ: a JSON merge patch
 * carrying `metadata.resourceVersion` as a precondition, so a write over a newer version fails with
 * 409 Conflict; then the object is read fresh and the write recomputed (a few times at most). Passes are
 * serialised and coalesced: while one runs, later desired states wait and only the latest is written.
 */
export class StatusWriter {
  readonly #opts: StatusWriterOptions;
  #desired: readonly ObjectStatus[] = [];
  readonly #passes = new OnePassAtATime(
    () => this.#pass(),
    () => this.kick(),
  );
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** Per object: the resourceVersion we patched over and what we wrote, so a stale cache is not rewritten. */
  readonly #written = new Map<string, { readonly from: string | undefined; readonly status: string }>();
  #stopped = false;
  /** Patches sent so far (tests and metrics). */
  writes = 0;

  constructor(opts: StatusWriterOptions) {
    this.#opts = opts;
  }

  /** The latest statuses (from translation, plus Ingress load-balancer status); triggers a pass. */
  update(statuses: readonly ObjectStatus[]): void {
    this.#desired = statuses;
    this.kick();
  }

  /** Run a pass soon (e.g. on becoming the leader). */
  kick(): void {
    if (this.#stopped || !this.#opts.isLeader()) return;
    this.#passes.run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#passes.idle();
  }

  /** Resolves when no pass is running (tests). */
  async idle(): Promise<void> {
    await this.#passes.idle();
  }

  async #pass(): Promise<void> {
    let failed = false;
    for (const s of this.#desired) {
      if (this.#stopped || !this.#opts.isLeader()) return;
      try {
        if (!(await this.#writeOne(s))) failed = true;
      } catch (err) {
        failed = true;
        log.warn("status write failed", { object: describe(s), error: (err as Error).message });
      }
    }
    // A failed write is retried by a later pass, not in a tight loop.
    if (failed && !this.#stopped) {
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => this.kick(), 2000);
    }
  }

  /** Returns false when the write should be retried later. */
  async #writeOne(s: ObjectStatus): Promise<boolean> {
    const r = statusResources[s.target.kind];
    if (!r) return true;
    const { namespace, name } = s.target;
    const key = `${s.target.kind}/${namespace}/${name}`;
    const path = resourcePath(r, namespace, name, "status");
    let current = this.#opts.lookup(s.target.kind, namespace, name);
    for (let attempt = 0; attempt < 5; attempt++) {
      if (!current) return true; // gone; nothing to write
      const now = (this.#opts.now?.() ?? new Date()).toISOString().replace(/\.\d+Z$/, "Z");
      const desired = desiredStatus(current.status, s.status, this.#opts.controllerName, now);
      const rv = current.metadata?.resourceVersion;
      if (sameJson(current.status, desired)) return true;
      const last = this.#written.get(key);
      if (attempt === 0 && last && last.from === rv && last.status === canonical(stripTimes(desired)))
        return true;
      if (!this.#opts.isLeader()) return true;
      const body = {
        metadata: { resourceVersion: rv },
        status: replacementPatch(current.status ?? {}, desired),
      };
      const res = await this.#opts.client.request("PATCH", path, {
        body,
        contentType: "application/merge-patch+json",
      });
      this.writes++;
      if (res.status === 200) {
        this.#written.set(key, { from: rv, status: canonical(stripTimes(desired)) });
        log.debug("status written", { object: key });
        return true;
      }
      if (res.status === 404) return true;
      if (res.status !== 409) {
        log.warn("status write refused", { object: key, status: describeFailure(res) });
        return false;
      }
      const fresh = await this.#opts.client.get(resourcePath(r, namespace, name));
      current = fresh.status === 200 ? (fresh.body as CachedObject) : undefined;
    }
    log.warn("status write kept conflicting; will retry", { object: key });
    return false;
  }
}

/** What we wrote, minus timestamps: a repeated desired state differs only in `now`. */
function stripTimes(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v ?? {}, (k, val) => (k === "lastTransitionTime" ? undefined : val)));
}

function describe(s: ObjectStatus): string {
  return `${s.target.kind} ${s.target.namespace ? `${s.target.namespace}/` : ""}${s.target.name}`;
}
