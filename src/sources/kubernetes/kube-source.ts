import { logger } from "../../observability/logger.ts";
import { CappedDebounce } from "../debounce.ts";
import type { KnownKind } from "../schema/index.ts";
import type { ResourceSnapshot } from "../snapshot.ts";
import { assembleSnapshot, type InvalidObject, type ParseCache, referencedSecrets } from "./assemble.ts";
import type { KubeClient } from "./client.ts";
import { KindInformer, type RawObject } from "./informer.ts";
import { resourcePath, watchedResources } from "./resources.ts";

const log = logger.child({ component: "kube-source" });
const stripped = Symbol("secret data dropped");

export interface KubernetesSourceOptions {
  /** Quiet time after the last change before a snapshot is built (latest wins). Default 100 ms. */
  readonly debounceMs?: number;
  /** Passed to each watch; see KindInformerOptions. */
  readonly watchIdleMs?: number;
  /** Called with every invalid object once per version (besides the log line), e.g. for metrics. */
  readonly onInvalid?: (invalid: readonly InvalidObject[]) => void;
}

/**
 * The cluster as `ResourceSnapshot`s: one informer per kind (cluster-wide list+watch), every change
 * debounced into one rebuild, delivered to `onSnapshot` — the same contract as `FolderSource`. The first
 * snapshot is delivered only when every kind has been listed once, so a half-synced cluster never serves.
 * While the API server is unreachable nothing is delivered and the last table keeps serving; the
 * informers retry with backoff. Secrets: only those a Gateway listener or an Ingress references keep
 * their data in memory; the others are cached as metadata only and fetched (GET) when they become
 * referenced.
 */
export class KubernetesSource {
  readonly #client: KubeClient;
  readonly #onSnapshot: (snapshot: ResourceSnapshot) => void;
  readonly #opts: KubernetesSourceOptions;
  readonly #informers: Map<KnownKind, KindInformer>;
  readonly #cache: ParseCache = new Map();
  #referenced = new Set<string>();
  readonly #fetched = new Map<string, RawObject>();
  readonly #fetching = new Set<string>();
  readonly #reported = new Set<string>();
  readonly #debounce: CappedDebounce;
  #firstSync: (() => void) | undefined;
  #delivered = false;
  #stopped = false;

  constructor(
    client: KubeClient,
    onSnapshot: (snapshot: ResourceSnapshot) => void,
    opts: KubernetesSourceOptions = {},
  ) {
    this.#client = client;
    this.#onSnapshot = onSnapshot;
    this.#debounce = new CappedDebounce(opts.debounceMs ?? 100, () => this.#build());
    this.#opts = opts;
    this.#informers = new Map(
      (Object.keys(watchedResources) as KnownKind[]).map((kind) => [
        kind,
        new KindInformer(client, watchedResources[kind], {
          onChange: () => this.#changed(),
          transform: kind === "Secret" ? (obj) => this.#stripSecret(obj) : undefined,
          watchIdleMs: opts.watchIdleMs,
        }),
      ]),
    );
  }

  /** Start every informer; resolves once the first full snapshot has been delivered. */
  start(): Promise<void> {
    const synced = new Promise<void>((resolve) => {
      this.#firstSync = resolve;
    });
    for (const informer of this.#informers.values()) informer.start();
    return synced;
  }

  stop(): void {
    this.#stopped = true;
    this.#debounce.cancel();
    for (const informer of this.#informers.values()) informer.stop();
    this.#firstSync?.();
  }

  /** True once every kind has been listed (and the first snapshot delivered). */
  get synced(): boolean {
    return this.#delivered;
  }

  /** The cached raw object (with its current `.status`), for the status writer. */
  lookup(kind: KnownKind, namespace: string, name: string): RawObject | undefined {
    return this.#informers.get(kind)?.get(namespace, name);
  }

  #changed(): void {
    if (!this.#stopped) this.#debounce.trigger();
  }

  #build(): void {
    if (this.#stopped) return;
    const informers = [...this.#informers.values()];
    if (!informers.every((i) => i.synced)) return; // the last informer's sync triggers the first build
    const objects = Object.fromEntries(
      [...this.#informers].map(([kind, informer]) => [kind, informer.list()]),
    ) as Record<KnownKind, RawObject[]>;
    const pending = this.#resolveSecrets(objects);
    const { snapshot, invalid } = assembleSnapshot(objects, () => true, this.#cache);
    const referenced = referencedSecrets(snapshot);
    this.#referenced = referenced;
    const secrets = snapshot.secrets.filter((s) =>
      referenced.has(`${s.metadata.namespace ?? ""}/${s.metadata.name}`),
    );
    this.#report(invalid);
    if (pending.length) {
      // Newly referenced Secrets whose data was dropped: fetch them, then build again.
      for (const key of pending) void this.#fetchSecret(key);
    }
    this.#delivered = true;
    this.#onSnapshot({ ...snapshot, secrets });
    this.#firstSync?.();
    this.#firstSync = undefined;
  }

  /** Replace stripped Secrets by fetched copies; returns referenced Secrets that must be fetched. */
  #resolveSecrets(objects: Record<KnownKind, RawObject[]>): string[] {
    const pending: string[] = [];
    const referenced = referencedSecrets({
      gateways: objects.Gateway as never,
      ingresses: objects.Ingress as never,
      authPolicies: objects.AuthPolicy,
    });
    objects.Secret = objects.Secret.map((s) => {
      const key = `${s.metadata?.namespace ?? ""}/${s.metadata?.name ?? ""}`;
      if (!referenced.has(key)) {
        this.#fetched.delete(key);
        return this.#stripSecret(s, referenced);
      }
      if (!(stripped in s)) return s;
      const got = this.#fetched.get(key);
      if (got && got.metadata?.resourceVersion === s.metadata?.resourceVersion) return got;
      pending.push(key);
      return s;
    });
    return pending;
  }

  async #fetchSecret(key: string): Promise<void> {
    if (this.#fetching.has(key)) return;
    this.#fetching.add(key);
    const [namespace, name] = key.split("/") as [string, string];
    try {
      const res = await this.#client.get(resourcePath(watchedResources.Secret, namespace, name));
      if (res.status === 200) {
        this.#fetched.set(key, { kind: "Secret", apiVersion: "v1", ...(res.body as RawObject) });
        this.#changed();
      } else if (res.status !== 404)
        log.warn("cannot read a referenced Secret", { secret: key, status: res.status });
    } catch (err) {
      log.warn("cannot read a referenced Secret", { secret: key, error: (err as Error).message });
    } finally {
      this.#fetching.delete(key);
    }
  }

  /** Drop the data of a Secret nobody references (in place: the informer's cached copy is ours). */
  #stripSecret(obj: RawObject, referenced = this.#referenced): RawObject {
    const key = `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
    if (referenced.has(key) || !("data" in obj || "stringData" in obj)) return obj;
    delete obj.data;
    delete obj.stringData;
    Object.defineProperty(obj, stripped, { value: true, enumerable: false });
    return obj;
  }

  /** Log each invalid object once per version; it stays left out until fixed. */
  #report(invalid: readonly InvalidObject[]): void {
    const now = new Set<string>();
    const fresh: InvalidObject[] = [];
    for (const i of invalid) {
      const key = `${i.kind}/${i.name}|${i.reason}`;
      now.add(key);
      if (this.#reported.has(key)) continue;
      fresh.push(i);
      log.error("invalid object from the API server is left out", {
        kind: i.kind,
        name: i.name,
        reason: i.reason,
      });
    }
    this.#reported.clear();
    for (const k of now) this.#reported.add(k);
    if (fresh.length) this.#opts.onInvalid?.(fresh);
  }
}
