import { logger } from "../../observability/logger.ts";
import type { KnownKind } from "../schema/index.ts";
import { referencedSecrets } from "./assemble.ts";
import type { KubeClient } from "./client.ts";
import type { RawObject } from "./informer.ts";
import { resourcePath, watchedResources } from "./resources.ts";

const log = logger.child({ component: "kube-source" });
const stripped = Symbol("secret data dropped");
/** Pause before a Secret whose read failed is read again. */
const retryMs = 2000;

export interface SecretDataOptions {
  /** Secrets kept whatever references them (`namespace/name`): the `--default-certificate` one. */
  readonly always?: readonly string[];
  /**
   * How long a snapshot waits for a referenced Secret that is still being read (default 5 s). Past it
   * the snapshot goes out without that Secret, which then shows as a real problem (InvalidCertificateRef).
   */
  readonly waitMs?: number;
}

/**
 * Which Secrets keep their data in memory, and reading those that became referenced after their data
 * was dropped. Only Secrets a Gateway listener, an Ingress, a policy (or `always`) references keep data;
 * the informer caches the others as metadata only. A newly referenced Secret is read once (GET); until
 * that answered (bounded by `waitMs`), `resolve` says to hold the snapshot, so listeners neither serve
 * the default certificate nor report InvalidCertificateRef for a Secret that exists.
 */
export class SecretData {
  readonly #client: KubeClient;
  readonly #onFetched: () => void;
  readonly #always: readonly string[];
  readonly #waitMs: number;
  #referenced = new Set<string>();
  readonly #fetched = new Map<string, RawObject>();
  readonly #fetching = new Set<string>();
  /** When each referenced-but-unread Secret was first wanted: the wait is bounded from there. */
  readonly #wantedSince = new Map<string, number>();
  /** Secrets whose read failed: not waited for (the problem is real), read again after a pause. */
  readonly #failedAt = new Map<string, number>();
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(client: KubeClient, onFetched: () => void, opts: SecretDataOptions = {}) {
    this.#client = client;
    this.#onFetched = onFetched;
    this.#always = opts.always ?? [];
    this.#waitMs = opts.waitMs ?? 5000;
  }

  /** `namespace/name` of the Secrets referenced by the raw objects (plus `always`). */
  #referencedBy(objects: Readonly<Record<KnownKind, readonly RawObject[]>>): Set<string> {
    return referencedSecrets(
      {
        gateways: objects.Gateway as never,
        ingresses: objects.Ingress as never,
        authPolicies: objects.AuthPolicy,
      },
      this.#always,
    );
  }

  /**
   * Replace stripped referenced Secrets in `objects.Secret` by their fetched copies and start reading
   * those not fetched yet. Returns the referenced keys (from now on, watch events of other Secrets lose
   * their data), the keys worth holding the snapshot for, and in how many ms the oldest such wait ends.
   */
  resolve(objects: Record<KnownKind, RawObject[]>): {
    referenced: Set<string>;
    waiting: string[];
    waitMs: number;
  } {
    const referenced = this.#referencedBy(objects);
    this.#referenced = referenced;
    const unread: string[] = [];
    objects.Secret = objects.Secret.map((s) => {
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
    for (const key of this.#failedAt.keys()) if (!wanted.has(key)) this.#failedAt.delete(key);
    let waitMs = Number.POSITIVE_INFINITY;
    const waiting: string[] = [];
    for (const key of unread) {
      const since = this.#wantedSince.get(key) ?? now;
      this.#wantedSince.set(key, since);
      const failed = this.#failedAt.get(key);
      if (failed !== undefined && now - failed < retryMs) continue;
      void this.#fetch(key);
      const left = since + this.#waitMs - now;
      if (failed === undefined && left > 0) {
        waiting.push(key);
        waitMs = Math.min(waitMs, left);
      }
    }
    return { referenced, waiting, waitMs };
  }

  stop(): void {
    clearTimeout(this.#retry);
  }

  /** Drop the data of a Secret nobody references (in place: the informer's cached copy is ours). */
  strip(obj: RawObject, referenced = this.#referenced): RawObject {
    if (referenced.has(keyOf(obj)) || !("data" in obj || "stringData" in obj)) return obj;
    delete obj.data;
    delete obj.stringData;
    Object.defineProperty(obj, stripped, { value: true, enumerable: false });
    return obj;
  }

  async #fetch(key: string): Promise<void> {
    if (this.#fetching.has(key)) return;
    this.#fetching.add(key);
    const [namespace, name] = key.split("/") as [string, string];
    let failure: string | undefined;
    try {
      const path = resourcePath(watchedResources.Secret, namespace, name);
      const res = await this.#client.get(path); // its own timeout; the snapshot waits only `waitMs`
      if (res.status === 200) {
        this.#fetched.set(key, { kind: "Secret", apiVersion: "v1", ...(res.body as RawObject) });
        this.#failedAt.delete(key);
      } else failure = `HTTP ${res.status}`; // 404: deleted meanwhile; its watch event is on the way
    } catch (err) {
      failure = (err as Error).message;
    } finally {
      this.#fetching.delete(key);
    }
    if (failure !== undefined) {
      log.warn("cannot read a referenced Secret; reading it again shortly", { secret: key, error: failure });
      this.#failedAt.set(key, Date.now());
      clearTimeout(this.#retry);
      this.#retry = setTimeout(this.#onFetched, retryMs);
    }
    // Build again now: with the data, or without waiting for a Secret that could not be read.
    this.#onFetched();
  }
}

function keyOf(obj: RawObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}
