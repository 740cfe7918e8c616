import { logger } from "../../observability/logger.ts";
import type { KnownKind } from "../schema/index.ts";
import type { KubeClient } from "./client.ts";
import type { RawObject } from "./informer.ts";
import { resourcePath, watchedResources } from "./resources.ts";

const log = logger.child({ component: "kube-source" });
const stripped = Symbol("data dropped");
/** Pause before an object whose read failed is read again. */
const retryMs = 2000;

export interface ReferencedDataOptions {
  /** The kind whose data is kept only while referenced (Secret, ConfigMap). */
  readonly kind: "Secret" | "ConfigMap";
  /** The fields that hold its data: dropped from objects nothing references. */
  readonly dataFields: readonly string[];
  /** Fields never read (ConfigMap `binaryData`): dropped from every object, referenced or not. */
  readonly unread?: readonly string[];
  /** `namespace/name` of the objects of `kind` that the raw objects of every kind reference. */
  readonly referencedBy: (objects: Readonly<Record<KnownKind, readonly RawObject[]>>) => Set<string>;
  /**
   * How long a snapshot waits for a referenced object that is still being read (default 5 s). Past it,
   * or once its read failed, the snapshot goes out without that object and names it in `unreadable`,
   * which then shows as a real problem (a Secret: InvalidCertificateRef; a ConfigMap: InvalidAnnotation),
   * never as an object without data.
   */
  readonly waitMs?: number;
}

/**
 * Which objects of a kind keep their data in memory, and reading those that became referenced after their
 * data was dropped. Secrets: only those a Gateway listener, an Ingress, a policy (or
 * `--default-certificate`) references keep data; ConfigMaps: only those an Ingress's `custom-headers`
 * names. The informer caches the others as metadata only. A newly referenced object is read once (GET);
 * until that answered (bounded by `waitMs`), `resolve` says to hold the snapshot, so listeners neither
 * serve the default certificate nor report InvalidCertificateRef for a Secret that exists (nor an Ingress
 * its headers' ConfigMap missing).
 */
export class ReferencedData {
  readonly #client: KubeClient;
  readonly #onFetched: () => void;
  readonly #opts: ReferencedDataOptions;
  readonly #waitMs: number;
  #referenced = new Set<string>();
  readonly #fetched = new Map<string, RawObject>();
  readonly #fetching = new Set<string>();
  /** When each referenced-but-unread object was first wanted: the wait is bounded from there. */
  readonly #wantedSince = new Map<string, number>();
  /** Objects whose read failed, when and why: not waited for (the problem is real), read again after a pause. */
  readonly #failed = new Map<string, { at: number; why: string }>();
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(client: KubeClient, onFetched: () => void, opts: ReferencedDataOptions) {
    this.#client = client;
    this.#onFetched = onFetched;
    this.#opts = opts;
    this.#waitMs = opts.waitMs ?? 5000;
  }

  /**
   * Replace stripped referenced objects in `objects[kind]` by their fetched copies and start reading
   * those not fetched yet. Returns the referenced keys (from now on, watch events of other objects lose
   * their data), the keys worth holding the snapshot for, and in how many ms the oldest such wait ends.
   * Referenced objects not read and not waited for (their read failed, or the wait ran out) are taken
   * out of `objects[kind]` and returned in `unreadable` with why: delivered without their data, they
   * would read as empty.
   */
  resolve(objects: Record<KnownKind, RawObject[]>): {
    referenced: Set<string>;
    waiting: string[];
    waitMs: number;
    unreadable: Map<string, string>;
  } {
    const referenced = this.#opts.referencedBy(objects);
    this.#referenced = referenced;
    const unread: string[] = [];
    const kind = this.#opts.kind;
    objects[kind] = objects[kind].map((s) => {
      const key = keyOf(s);
      if (!referenced.has(key)) {
        this.#fetched.delete(key);
        return this.strip(s, referenced);
      }
      if (!(stripped in s)) return s;
      const got = this.#fetched.get(key);
      if (got && got.metadata?.resourceVersion === s.metadata?.resourceVersion) return got;
      unread.push(key);
      return s;
    });
    const now = Date.now();
    const wanted = new Set(unread);
    for (const key of this.#wantedSince.keys()) if (!wanted.has(key)) this.#wantedSince.delete(key);
    for (const key of this.#failed.keys()) if (!wanted.has(key)) this.#failed.delete(key);
    let waitMs = Number.POSITIVE_INFINITY;
    const waiting: string[] = [];
    const unreadable = new Map<string, string>();
    for (const key of unread) {
      const since = this.#wantedSince.get(key) ?? now;
      this.#wantedSince.set(key, since);
      const failed = this.#failed.get(key);
      if (failed === undefined || now - failed.at >= retryMs) void this.#fetch(key);
      const left = since + this.#waitMs - now;
      if (failed === undefined && left > 0) {
        waiting.push(key);
        waitMs = Math.min(waitMs, left);
      } else
        unreadable.set(key, failed ? `reading it failed: ${failed.why}` : `no answer in ${this.#waitMs} ms`);
    }
    if (unreadable.size > 0) objects[kind] = objects[kind].filter((o) => !unreadable.has(keyOf(o)));
    return { referenced, waiting, waitMs, unreadable };
  }

  stop(): void {
    clearTimeout(this.#retry);
  }

  /** Drop the data of an object nobody references (in place: the informer's cached copy is ours). */
  strip(obj: RawObject, referenced = this.#referenced): RawObject {
    for (const field of this.#opts.unread ?? []) delete obj[field];
    const fields = this.#opts.dataFields;
    if (referenced.has(keyOf(obj)) || !fields.some((f) => f in obj)) return obj;
    for (const field of fields) delete obj[field];
    Object.defineProperty(obj, stripped, { value: true, enumerable: false });
    return obj;
  }

  async #fetch(key: string): Promise<void> {
    if (this.#fetching.has(key)) return;
    this.#fetching.add(key);
    const [namespace, name] = key.split("/") as [string, string];
    let failure: string | undefined;
    try {
      const kind = this.#opts.kind;
      const path = resourcePath(watchedResources[kind], namespace, name);
      const res = await this.#client.get(path); // its own timeout; the snapshot waits only `waitMs`
      if (res.status === 200) {
        const got: RawObject = { kind, apiVersion: "v1", ...(res.body as RawObject) };
        for (const field of this.#opts.unread ?? []) delete got[field];
        this.#fetched.set(key, got);
        this.#failed.delete(key);
      } else failure = `HTTP ${res.status}`; // 404: deleted meanwhile; its watch event is on the way
    } catch (err) {
      failure = (err as Error).message;
    } finally {
      this.#fetching.delete(key);
    }
    if (failure !== undefined) {
      log.warn(`cannot read a referenced ${this.#opts.kind}; reading it again shortly`, {
        object: key,
        error: failure,
      });
      this.#failed.set(key, { at: Date.now(), why: failure });
      clearTimeout(this.#retry);
      this.#retry = setTimeout(this.#onFetched, retryMs);
    }
    // Build again now: with the data, or without waiting for an object that could not be read.
    this.#onFetched();
  }
}

function keyOf(obj: RawObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}
